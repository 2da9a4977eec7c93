import { createDeveloperAccount, listDeveloperAccounts } from "@/lib/developer-accounts/operations";
import { routes } from "@/lib/http/routes";

export const { GET, POST, PUT, PATCH, DELETE } = routes(listDeveloperAccounts, createDeveloperAccount);
