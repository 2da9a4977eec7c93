import { routes } from "@/lib/http/routes";
import { completeRecovery } from "@/lib/intents/account-operations";

export const { GET, POST, PUT, PATCH, DELETE } = routes(completeRecovery);
