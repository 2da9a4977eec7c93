import { routes } from "@/lib/http/routes";
import { evaluatePolicy } from "@/lib/policies/operations";

export const { GET, POST, PUT, PATCH, DELETE } = routes(evaluatePolicy);
