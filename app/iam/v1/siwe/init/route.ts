import { routes } from "@/lib/http/routes";
import { siweInitOperation } from "@/lib/iam/siwe-operations";

export const { GET, POST, PUT, PATCH, DELETE } = routes(siweInitOperation);
