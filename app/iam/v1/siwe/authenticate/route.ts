import { routes } from "@/lib/http/routes";
import { siweAuthenticateOperation } from "@/lib/iam/siwe-operations";

export const { GET, POST, PUT, PATCH, DELETE } = routes(siweAuthenticateOperation);
