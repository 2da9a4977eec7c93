import { routes } from "@/lib/http/routes";
import { createPolicy, listPolicies } from "@/lib/policies/operations";

export const { GET, POST, PUT, PATCH, DELETE } = routes(listPolicies, createPolicy);
