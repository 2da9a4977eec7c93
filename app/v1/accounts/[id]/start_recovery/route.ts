import { routes } from "@/lib/http/routes";
import { startRecovery } from "@/lib/intents/account-operations";

export const { GET, POST, PUT, PATCH, DELETE } = routes(startRecovery);
