import { routes } from "@/lib/http/routes";
import { verifyOAuthToken } from "@/lib/iam/provider-operations";

export const { GET, POST, PUT, PATCH, DELETE } = routes(verifyOAuthToken);
