import { routes } from "@/lib/http/routes";
import { deleteForwarderContract, getForwarderContract, updateForwarderContract } from "@/lib/forwarders/operations";

export const { GET, POST, PUT, PATCH, DELETE } = routes(getForwarderContract, updateForwarderContract, deleteForwarderContract);
