import { routes } from "@/lib/http/routes";
import { me } from "@/lib/iam/credential-operations";

export const { GET, POST, PUT, PATCH, DELETE } = routes(me);
