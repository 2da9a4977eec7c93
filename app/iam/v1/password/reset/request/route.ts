import { routes } from "@/lib/http/routes";
import { requestPasswordReset } from "@/lib/iam/credential-operations";

export const { GET, POST, PUT, PATCH, DELETE } = routes(requestPasswordReset);
