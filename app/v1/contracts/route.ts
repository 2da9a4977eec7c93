import { routes } from "@/lib/http/routes";
import { createContract, listContracts } from "@/lib/contracts/operations";

export const { GET, POST, PUT, PATCH, DELETE } = routes(listContracts, createContract);
