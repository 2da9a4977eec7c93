import { routes } from "@/lib/http/routes";
import { getPlayerCryptoCurrencyInventory } from "@/lib/inventory/operations";

export const { GET, POST, PUT, PATCH, DELETE } = routes(getPlayerCryptoCurrencyInventory);
