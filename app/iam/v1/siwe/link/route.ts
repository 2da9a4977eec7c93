import { routes } from "@/lib/http/routes";
import { siweLinkOperation } from "@/lib/iam/siwe-operations";

export const { GET, POST, PUT, PATCH, DELETE } = routes(siweLinkOperation);
