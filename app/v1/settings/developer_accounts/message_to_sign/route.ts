import { routes } from "@/lib/http/routes";
import { developerAccountMessage } from "@/lib/developer-accounts/operations";

export const { GET, POST, PUT, PATCH, DELETE } = routes(developerAccountMessage);
