import { routes } from "@/lib/http/routes";
import { cancelTransferAccountOwnership } from "@/lib/accounts/player-action-operations";

export const { GET, POST, PUT, PATCH, DELETE } = routes(cancelTransferAccountOwnership);
