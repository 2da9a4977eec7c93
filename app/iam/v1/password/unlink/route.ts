import { routes } from "@/lib/http/routes";
import { unlinkEmailOperation } from "@/lib/iam/credential-operations";

export const { GET, POST, PUT, PATCH, DELETE } = routes(unlinkEmailOperation);
