import { routes } from "@/lib/http/routes";
import { startRecovery } from "@/lib/accounts/action-operations";

export const { GET, POST, PUT, PATCH, DELETE } = routes(startRecovery);
