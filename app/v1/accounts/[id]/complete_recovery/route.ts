import { routes } from "@/lib/http/routes";
import { completeRecovery } from "@/lib/account-actions/operations";

export const { GET, POST, PUT, PATCH, DELETE } = routes(completeRecovery);
