import { routes } from "@/lib/http/routes";
import { createDeveloperAccount, listDeveloperAccounts } from "@/lib/developer-accounts/operations";

export const { GET, POST, PUT, PATCH, DELETE } = routes(listDeveloperAccounts, createDeveloperAccount);
