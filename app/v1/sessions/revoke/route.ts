import { routes } from "@/lib/http/routes";
import { revokeSession } from "@/lib/sessions/operations";

export const { GET, POST, PUT, PATCH, DELETE } = routes(revokeSession);
