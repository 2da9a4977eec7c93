import { routes } from "@/lib/http/routes";
import { getSession } from "@/lib/sessions/operations";

export const { GET, POST, PUT, PATCH, DELETE } = routes(getSession);
