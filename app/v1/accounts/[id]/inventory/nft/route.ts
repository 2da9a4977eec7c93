import { routes } from "@/lib/http/routes";
import { getAccountNftInventory } from "@/lib/inventory/operations";

export const { GET, POST, PUT, PATCH, DELETE } = routes(getAccountNftInventory);
