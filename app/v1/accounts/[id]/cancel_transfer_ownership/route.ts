import { routes } from "@/lib/http/routes";
import { cancelTransferOwnership } from "@/lib/accounts/action-operations";

export const { GET, POST, PUT, PATCH, DELETE } = routes(cancelTransferOwnership);
