import { routes } from "@/lib/http/routes";
import { deployAccount } from "@/lib/account-actions/operations";

export const { GET, POST, PUT, PATCH, DELETE } = routes(deployAccount);
