import { routes } from "@/lib/http/routes";
import { signingLinkStatus } from "@/lib/signing/operations";

export const { GET, POST, PUT, PATCH, DELETE } = routes(signingLinkStatus);
