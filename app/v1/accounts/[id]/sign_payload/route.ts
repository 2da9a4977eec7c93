import { routes } from "@/lib/http/routes";
import { signPayload } from "@/lib/accounts/operations";

export const { GET, POST, PUT, PATCH, DELETE } = routes(signPayload);
