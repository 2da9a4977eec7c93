import { routes } from "@/lib/http/routes";
import { startRecovery } from "@/lib/account-actions/operations";

export const { GET, POST, PUT, PATCH, DELETE } = routes(startRecovery);
