import { routes } from "@/lib/http/routes";
import { authorizePlayer } from "@/lib/iam/provider-operations";

export const { GET, POST, PUT, PATCH, DELETE } = routes(authorizePlayer);
