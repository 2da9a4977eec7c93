import { routes } from "@/lib/http/routes";
import { signingLinkSignature } from "@/lib/signing/operations";

export const { GET, POST, PUT, PATCH, DELETE } = routes(signingLinkSignature);
