import { routes } from "@/lib/http/routes";
import { runAdmin } from "@/lib/projects/admin-operation";

export const { GET, POST, PUT, PATCH, DELETE } = routes(runAdmin);
