import { routes } from "@/lib/http/routes";
import { cancelTransferAccountOwnership } from "@/lib/intents/player-ownership";

export const { GET, POST, PUT, PATCH, DELETE } = routes(cancelTransferAccountOwnership);
