import { routes } from "@/lib/http/routes";
import { googleToken } from "@/lib/iam/google-operations";

export const { GET, POST, PUT, PATCH, DELETE } = routes(googleToken);
