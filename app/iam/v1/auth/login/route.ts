import { routes } from "@/lib/http/routes";
import { loginOperation } from "@/lib/iam/credential-operations";

export const { GET, POST, PUT, PATCH, DELETE } = routes(loginOperation);
