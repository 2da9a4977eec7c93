import { routes } from "@/lib/http/routes";
import { requestTransferAccountOwnership } from "@/lib/accounts/player-action-operations";

export const { GET, POST, PUT, PATCH, DELETE } = routes(requestTransferAccountOwnership);
