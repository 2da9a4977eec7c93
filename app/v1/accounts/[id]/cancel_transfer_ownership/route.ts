import { routes } from "@/lib/http/routes";
import { cancelTransferOwnership } from "@/lib/intents/account-operations";

export const { GET, POST, PUT, PATCH, DELETE } = routes(cancelTransferOwnership);
