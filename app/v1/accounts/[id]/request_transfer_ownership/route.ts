import { routes } from "@/lib/http/routes";
import { requestTransferOwnership } from "@/lib/intents/account-operations";

export const { GET, POST, PUT, PATCH, DELETE } = routes(requestTransferOwnership);
