import { routes } from "@/lib/http/routes";
import { getExchangeFee, removeExchangeFee, updateExchangeFee } from "@/lib/exchange/operations";

export const { GET, POST, PUT, PATCH, DELETE } = routes(getExchangeFee, updateExchangeFee, removeExchangeFee);
