import { getAccount } from "@/lib/accounts/operations";
import { routes } from "@/lib/http/routes";

export const { GET, POST, PUT, PATCH, DELETE } = routes(getAccount);
