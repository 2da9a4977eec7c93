import { routes } from "@/lib/http/routes";
import { deleteOAuthConfig, getOAuthConfig } from "@/lib/iam/provider-operations";

export const { GET, POST, PUT, PATCH, DELETE } = routes(getOAuthConfig, deleteOAuthConfig);
