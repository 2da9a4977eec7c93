import { routes } from "@/lib/http/routes";
import { refreshOperation } from "@/lib/iam/credential-operations";

export const { GET, POST, PUT, PATCH, DELETE } = routes(refreshOperation);
