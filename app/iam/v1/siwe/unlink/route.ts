import { routes } from "@/lib/http/routes";
import { siweUnlinkOperation } from "@/lib/iam/siwe-operations";

export const { GET, POST, PUT, PATCH, DELETE } = routes(siweUnlinkOperation);
