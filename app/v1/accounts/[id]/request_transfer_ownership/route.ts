import { routes } from "@/lib/http/routes";
import { requestTransferOwnership } from "@/lib/account-actions/operations";

export const { GET, POST, PUT, PATCH, DELETE } = routes(requestTransferOwnership);
