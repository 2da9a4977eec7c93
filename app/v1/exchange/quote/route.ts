import { quoteSwap } from "@/lib/exchange/operations";
import { routes } from "@/lib/http/routes";

export const { GET, POST, PUT, PATCH, DELETE } = routes(quoteSwap);
