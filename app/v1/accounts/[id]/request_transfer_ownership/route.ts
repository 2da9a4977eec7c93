import { routes } from "@/lib/http/routes";
import { requestTransferOwnership } from "@/lib/accounts/action-operations";

export const { GET, POST, PUT, PATCH, DELETE } = routes(requestTransferOwnership);
