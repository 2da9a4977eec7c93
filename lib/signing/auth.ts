import { readBody } from "@/lib/http/body";
import { badRequest } from "@/lib/errors";
import type { AuthStrategy } from "@/lib/http/principals";
import { readingRequest } from "@/lib/http/read";
import { verifySigningToken } from "@/lib/intents/signing-link";

/** Before a signing link's token is checked, its body may hold no more than the token and a signature (~300 bytes and a few KiB). */
const UNVERIFIED_BODY_BYTES = 16 * 1024;

/**
 * The signing link's token for the intent in the path, limited per client address first: from
 * `?t=`, checked before the body is read, or from a body field `token`, read from a body of at
 * most UNVERIFIED_BODY_BYTES.
 */
export const signingLink: AuthStrategy<{ kind: "signingLink"; intentId: string; token: string }> = {
  security: [],
  apiRequest: false,
  perAddress: true,
  async authenticate(_db, { request, url, params }) {
    let token = url.searchParams.get("t");
    let body: Record<string, unknown> | undefined;
    if (!token && request.method === "POST") {
      body = await readingRequest(() => readBody(request, UNVERIFIED_BODY_BYTES), "request body");
      token = typeof body.token === "string" ? body.token : null;
    }
    if (!token) throw badRequest("The signing link's token is missing: open the page from the full link.", { t: { message: "required" } });
    const intentId = params.id ?? "";
    const project = await verifySigningToken(token, intentId);
    return { principal: { kind: "signingLink", intentId, token }, project, body };
  },
};
