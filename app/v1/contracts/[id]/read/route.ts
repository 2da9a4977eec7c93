import { routes } from "@/lib/http/routes";
import { readContract } from "@/lib/contracts/operations";

export const { GET, POST, PUT, PATCH, DELETE } = routes(readContract);
