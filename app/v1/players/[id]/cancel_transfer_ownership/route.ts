import { routes } from "@/lib/http/routes";
import { cancelTransferAccountOwnership } from "@/lib/account-actions/player-operations";

export const { GET, POST, PUT, PATCH, DELETE } = routes(cancelTransferAccountOwnership);
