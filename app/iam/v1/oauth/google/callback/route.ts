import { routes } from "@/lib/http/routes";
import { googleCallback } from "@/lib/iam/google-operations";

export const { GET, POST, PUT, PATCH, DELETE } = routes(googleCallback);
