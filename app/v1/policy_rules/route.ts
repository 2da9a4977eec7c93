import { routes } from "@/lib/http/routes";
import { createPolicyRule, listPolicyRules } from "@/lib/policies/operations";

export const { GET, POST, PUT, PATCH, DELETE } = routes(listPolicyRules, createPolicyRule);
