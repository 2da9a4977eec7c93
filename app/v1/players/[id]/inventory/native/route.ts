import { routes } from "@/lib/http/routes";
import { getPlayerNativeInventory } from "@/lib/inventory/operations";

export const { GET, POST, PUT, PATCH, DELETE } = routes(getPlayerNativeInventory);
