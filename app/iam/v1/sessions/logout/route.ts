import { routes } from "@/lib/http/routes";
import { logoutOperation } from "@/lib/iam/credential-operations";

export const { GET, POST, PUT, PATCH, DELETE } = routes(logoutOperation);
