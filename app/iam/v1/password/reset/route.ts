import { routes } from "@/lib/http/routes";
import { resetPasswordOperation } from "@/lib/iam/credential-operations";

export const { GET, POST, PUT, PATCH, DELETE } = routes(resetPasswordOperation);
