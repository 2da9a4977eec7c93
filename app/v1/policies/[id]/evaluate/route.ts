import { routes } from "@/lib/http/routes";
import { evaluatePolicy } from "@/lib/policy-actions/operations";

export const { GET, POST, PUT, PATCH, DELETE } = routes(evaluatePolicy);
