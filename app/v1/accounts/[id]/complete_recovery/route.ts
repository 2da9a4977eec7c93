import { routes } from "@/lib/http/routes";
import { completeRecovery } from "@/lib/accounts/action-operations";

export const { GET, POST, PUT, PATCH, DELETE } = routes(completeRecovery);
