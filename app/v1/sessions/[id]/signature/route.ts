import { routes } from "@/lib/http/routes";
import { signSession } from "@/lib/sessions/operations";

export const { GET, POST, PUT, PATCH, DELETE } = routes(signSession);
