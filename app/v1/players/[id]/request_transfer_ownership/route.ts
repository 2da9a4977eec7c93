import { routes } from "@/lib/http/routes";
import { requestTransferAccountOwnership } from "@/lib/intents/player-ownership";

export const { GET, POST, PUT, PATCH, DELETE } = routes(requestTransferAccountOwnership);
