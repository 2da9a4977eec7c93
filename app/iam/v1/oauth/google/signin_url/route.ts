import { routes } from "@/lib/http/routes";
import { googleSigninUrl } from "@/lib/iam/google-operations";

export const { GET, POST, PUT, PATCH, DELETE } = routes(googleSigninUrl);
