import { routes } from "@/lib/http/routes";
import { runAdmin } from "@/lib/admin";

export const { GET, POST, PUT, PATCH, DELETE } = routes(runAdmin);
