import { routes } from "@/lib/http/routes";
import { listLedger } from "@/lib/sponsorship/operations";

export const { GET, POST, PUT, PATCH, DELETE } = routes(listLedger);
