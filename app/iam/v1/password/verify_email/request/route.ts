import { routes } from "@/lib/http/routes";
import { requestEmailVerification } from "@/lib/iam/credential-operations";

export const { GET, POST, PUT, PATCH, DELETE } = routes(requestEmailVerification);
