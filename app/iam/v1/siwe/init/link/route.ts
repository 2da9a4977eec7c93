import { routes } from "@/lib/http/routes";
import { siweInitLinkOperation } from "@/lib/iam/siwe-operations";

export const { GET, POST, PUT, PATCH, DELETE } = routes(siweInitLinkOperation);
