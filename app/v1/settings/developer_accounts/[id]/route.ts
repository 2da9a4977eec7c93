import { routes } from "@/lib/http/routes";
import { deleteDeveloperAccount, getDeveloperAccount, updateDeveloperAccount } from "@/lib/developer-accounts/operations";

export const { GET, POST, PUT, PATCH, DELETE } = routes(getDeveloperAccount, updateDeveloperAccount, deleteDeveloperAccount);
