import { routes } from "@/lib/http/routes";
import { verifyProviderTokenOperation } from "@/lib/iam/provider-operations";

export const { GET, POST, PUT, PATCH, DELETE } = routes(verifyProviderTokenOperation);
