import { routes } from "@/lib/http/routes";
import { passwordSignup } from "@/lib/iam/credential-operations";

export const { GET, POST, PUT, PATCH, DELETE } = routes(passwordSignup);
