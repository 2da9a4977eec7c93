// The signing page's links, in lib/intents because an intent awaiting its owner carries one (present.ts); the page
// itself (lib/signing) sits above.
import { errors, jwtVerify, SignJWT } from "jose";
import { ApiError, challenges } from "@/lib/errors";
import { unixSeconds } from "@/lib/http/resource";
import { derivedKey } from "@/lib/keys/master";
import { SPONSORSHIP_SECONDS } from "@/lib/paymasters/sponsor";
import type { ProjectContext } from "@/lib/tenant";
import { envText } from "@/lib/config";

/** How long a link to an unsponsored intent works: nothing else ends its wait for a signature. */
export const UNSPONSORED_LINK_SECONDS = 3600;

// Its own key, derived from the master key: a leaked link key reveals nothing else, and every
// instance sharing KEY_ENCRYPTION_KEY accepts the links the others made.
const linkKey = () => derivedKey("signing-links");

const ISSUER = "smart-wallet-service";
const AUDIENCE = "signing-page";

export interface SigningLinkIntent {
  id: string;
  projectId: string;
  livemode: boolean;
  sponsored: boolean;
  createdAt: Date;
}

/**
 * When a link stops working: a sponsored intent's paymaster signature runs out (and the intent is
 * cancelled) SPONSORSHIP_SECONDS after its creation; an unsponsored one's link lasts an hour.
 */
export function linkExpiry(intent: SigningLinkIntent, now = Date.now()): number {
  if (intent.sponsored) return unixSeconds(intent.createdAt) + SPONSORSHIP_SECONDS;
  return Math.floor(now / 1000) + UNSPONSORED_LINK_SECONDS;
}

/** The link's credential: an HS256 JWT naming the intent, its project and mode. */
export async function signingToken(intent: SigningLinkIntent, now = Date.now()): Promise<string> {
  return new SignJWT({ pid: intent.projectId, live: intent.livemode })
    .setProtectedHeader({ alg: "HS256" })
    .setSubject(intent.id)
    .setIssuer(ISSUER)
    .setAudience(AUDIENCE)
    .setIssuedAt(Math.floor(now / 1000))
    .setExpirationTime(linkExpiry(intent, now))
    .sign(linkKey());
}

/** Why a link does not open its intent, in words for the page and the JSON error. */
export type LinkProblem = "invalid" | "expired" | "wrong_intent";

export class SigningLinkError extends ApiError {
  constructor(readonly problem: LinkProblem) {
    const messages: Record<LinkProblem, string> = {
      invalid: "This signing link is not valid: it may have been mistyped or altered. Ask for a new link.",
      expired: "This signing link has expired. Ask for a new link.",
      wrong_intent: "This signing link belongs to another transaction intent.",
    };
    super(401, "authentication_error", messages[problem], undefined, { "www-authenticate": challenges.signingLink });
  }
}

/** The project and mode a link opens, after checking its signature, expiry and intent. */
export async function verifySigningToken(token: string, intentId: string, now = Date.now()): Promise<ProjectContext> {
  let payload;
  try {
    ({ payload } = await jwtVerify(token, linkKey(), { algorithms: ["HS256"], issuer: ISSUER, audience: AUDIENCE, currentDate: new Date(now) }));
  } catch (err) {
    throw new SigningLinkError(err instanceof errors.JWTExpired ? "expired" : "invalid");
  }
  if (typeof payload.pid !== "string" || typeof payload.live !== "boolean" || typeof payload.sub !== "string") throw new SigningLinkError("invalid");
  if (payload.sub !== intentId) throw new SigningLinkError("wrong_intent");
  return { projectId: payload.pid, livemode: payload.live };
}

/** Where links point: PUBLIC_URL when the service sits behind a proxy, else the origin the request came to. */
export function publicOrigin(requestOrigin: string | undefined): string | undefined {
  const configured = envText("PUBLIC_URL");
  return configured ? configured.replace(/\/+$/, "") : requestOrigin;
}

/** The signing page's URL for an intent awaiting its owner's signature. */
export async function signingUrl(intent: SigningLinkIntent, requestOrigin: string | undefined): Promise<string | undefined> {
  const origin = publicOrigin(requestOrigin);
  if (!origin) return undefined;
  return `${origin}/sign/${encodeURIComponent(intent.id)}?t=${await signingToken(intent)}`;
}
