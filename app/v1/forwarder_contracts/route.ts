import { routes } from "@/lib/http/routes";
import { createForwarderContract, listForwarderContracts } from "@/lib/forwarders/operations";

export const { GET, POST, PUT, PATCH, DELETE } = routes(listForwarderContracts, createForwarderContract);
