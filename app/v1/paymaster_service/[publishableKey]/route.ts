import { routes } from "@/lib/http/routes";
import { paymasterServiceRpc } from "@/lib/paymaster-service/rpc-operation";

export const { GET, POST, PUT, PATCH, DELETE } = routes(paymasterServiceRpc);
