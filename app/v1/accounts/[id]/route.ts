import { routes } from "@/lib/http/routes";
import { getAccount } from "@/lib/accounts/operations";

export const { GET, POST, PUT, PATCH, DELETE } = routes(getAccount);
