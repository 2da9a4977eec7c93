import { routes } from "@/lib/http/routes";
import { bundlerRpcOperation } from "@/lib/bundler/operation";

export const { GET, POST, PUT, PATCH, DELETE } = routes(bundlerRpcOperation);
