import { routes } from "@/lib/http/routes";
import { verifyTokenPlayer } from "@/lib/iam/credential-operations";

export const { GET, POST, PUT, PATCH, DELETE } = routes(verifyTokenPlayer);
