import { routes } from "@/lib/http/routes";
import { createOAuthConfig, listOAuthConfig } from "@/lib/iam/provider-operations";

export const { GET, POST, PUT, PATCH, DELETE } = routes(listOAuthConfig, createOAuthConfig);
