import { getExchangeFee, removeExchangeFee, updateExchangeFee } from "@/lib/exchange/operations";
import { routes } from "@/lib/http/routes";

export const { GET, POST, PUT, PATCH, DELETE } = routes(getExchangeFee, updateExchangeFee, removeExchangeFee);
