import { readContract } from "@/lib/contracts/operations";
import { routes } from "@/lib/http/routes";

export const { GET, POST, PUT, PATCH, DELETE } = routes(readContract);
