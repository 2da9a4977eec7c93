import { routes } from "@/lib/http/routes";
import { getPlayerByExternalId } from "@/lib/iam/provider-operations";

export const { GET, POST, PUT, PATCH, DELETE } = routes(getPlayerByExternalId);
