import { routes } from "@/lib/http/routes";
import { cancelTransferOwnership } from "@/lib/account-actions/operations";

export const { GET, POST, PUT, PATCH, DELETE } = routes(cancelTransferOwnership);
