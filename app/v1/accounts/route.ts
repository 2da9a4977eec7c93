import { routes } from "@/lib/http/routes";
import { createAccount, listAccounts } from "@/lib/accounts/operations";

export const { GET, POST, PUT, PATCH, DELETE } = routes(listAccounts, createAccount);
