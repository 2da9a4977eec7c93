import { postLinkSignature } from "@/lib/signing/routes";

export const POST = postLinkSignature;
