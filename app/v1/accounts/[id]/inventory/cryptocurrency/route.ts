import { routes } from "@/lib/http/routes";
import { getAccountCryptoCurrencyInventory } from "@/lib/inventory/operations";

export const { GET, POST, PUT, PATCH, DELETE } = routes(getAccountCryptoCurrencyInventory);
