import { bundlerRpcOperation } from "@/lib/bundler/operation";
import { routes } from "@/lib/http/routes";

export const { GET, POST, PUT, PATCH, DELETE } = routes(bundlerRpcOperation);
