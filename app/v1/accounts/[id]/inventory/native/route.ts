import { routes } from "@/lib/http/routes";
import { getAccountNativeInventory } from "@/lib/inventory/operations";

export const { GET, POST, PUT, PATCH, DELETE } = routes(getAccountNativeInventory);
