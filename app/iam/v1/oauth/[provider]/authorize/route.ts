import { routes } from "@/lib/http/routes";
import { authorizeWithProvider } from "@/lib/iam/provider-operations";

export const { GET, POST, PUT, PATCH, DELETE } = routes(authorizeWithProvider);
