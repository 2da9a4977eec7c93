import { routes } from "@/lib/http/routes";
import { listBalances } from "@/lib/sponsorship/operations";

export const { GET, POST, PUT, PATCH, DELETE } = routes(listBalances);
