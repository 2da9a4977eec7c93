import { routes } from "@/lib/http/routes";
import { signupOperation } from "@/lib/iam/credential-operations";

export const { GET, POST, PUT, PATCH, DELETE } = routes(signupOperation);
