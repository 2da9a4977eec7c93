import { routes } from "@/lib/http/routes";
import { deletePolicyRule, getPolicyRule, updatePolicyRule } from "@/lib/policies/operations";

export const { GET, POST, PUT, PATCH, DELETE } = routes(getPolicyRule, updatePolicyRule, deletePolicyRule);
