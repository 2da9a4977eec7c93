import { routes } from "@/lib/http/routes";
import { enablePolicy } from "@/lib/policies/operations";

export const { GET, POST, PUT, PATCH, DELETE } = routes(enablePolicy);
