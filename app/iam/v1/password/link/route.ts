import { routes } from "@/lib/http/routes";
import { linkEmailOperation } from "@/lib/iam/credential-operations";

export const { GET, POST, PUT, PATCH, DELETE } = routes(linkEmailOperation);
