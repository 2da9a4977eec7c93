import { routes } from "@/lib/http/routes";
import { jwks } from "@/lib/iam/credential-operations";

export const { GET, POST, PUT, PATCH, DELETE } = routes(jwks);
