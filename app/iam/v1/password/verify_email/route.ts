import { routes } from "@/lib/http/routes";
import { verifyEmailOperation } from "@/lib/iam/credential-operations";

export const { GET, POST, PUT, PATCH, DELETE } = routes(verifyEmailOperation);
