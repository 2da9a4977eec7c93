import { routes } from "@/lib/http/routes";
import { passwordLogin } from "@/lib/iam/credential-operations";

export const { GET, POST, PUT, PATCH, DELETE } = routes(passwordLogin);
