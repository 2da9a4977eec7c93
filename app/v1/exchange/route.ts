import { routes } from "@/lib/http/routes";
import { createSwap } from "@/lib/exchange/operations";

export const { GET, POST, PUT, PATCH, DELETE } = routes(createSwap);
