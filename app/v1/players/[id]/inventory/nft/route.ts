import { routes } from "@/lib/http/routes";
import { getPlayerNftInventory } from "@/lib/inventory/operations";

export const { GET, POST, PUT, PATCH, DELETE } = routes(getPlayerNftInventory);
