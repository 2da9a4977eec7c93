import { routes } from "@/lib/http/routes";
import { quoteSwap } from "@/lib/exchange/operations";

export const { GET, POST, PUT, PATCH, DELETE } = routes(quoteSwap);
