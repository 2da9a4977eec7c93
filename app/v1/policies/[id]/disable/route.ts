import { routes } from "@/lib/http/routes";
import { disablePolicy } from "@/lib/policies/operations";

export const { GET, POST, PUT, PATCH, DELETE } = routes(disablePolicy);
