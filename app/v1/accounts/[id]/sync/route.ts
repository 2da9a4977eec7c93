import { routes } from "@/lib/http/routes";
import { syncAccount } from "@/lib/accounts/operations";

export const { GET, POST, PUT, PATCH, DELETE } = routes(syncAccount);
