import { routes } from "@/lib/http/routes";
import { createSession, listSessions } from "@/lib/sessions/operations";

export const { GET, POST, PUT, PATCH, DELETE } = routes(listSessions, createSession);
