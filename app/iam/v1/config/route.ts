import { routes } from "@/lib/http/routes";
import { createAuthConfig } from "@/lib/iam/provider-operations";

export const { GET, POST, PUT, PATCH, DELETE } = routes(createAuthConfig);
