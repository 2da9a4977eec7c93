import { routes } from "@/lib/http/routes";
import { deletePolicyRule, updatePolicyRule } from "@/lib/policies/operations";

export const { GET, POST, PUT, PATCH, DELETE } = routes(updatePolicyRule, deletePolicyRule);
