import { routes } from "@/lib/http/routes";
import { verifyToken } from "@/lib/iam/credential-operations";

export const { GET, POST, PUT, PATCH, DELETE } = routes(verifyToken);
