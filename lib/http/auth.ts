import { eq } from "drizzle-orm";
import { listensOnLoopbackOnly, envRaw } from "@/lib/config";
import type { Queryable } from "@/lib/db/client";
import { apiKeys } from "@/lib/db/schema";
import { sha256 } from "@/lib/keys/encryption";
import { findKey, type AuthenticatedKey } from "@/lib/projects/service";
import { trustedHops } from "./client-address";
import { forbidden, unauthorized } from "@/lib/errors";

export type KeyKind = "secret" | "publishable";

const authorization = (request: Request) => {
  const [scheme, credentials = ""] = (request.headers.get("authorization") ?? "").trim().split(/\s+/, 2);
  return { scheme: scheme?.toLowerCase(), credentials };
};

/** The token of `Authorization: Bearer <token>` (an API key, a player token, the CLI's token). */
export function bearerToken(request: Request): string | null {
  const { scheme, credentials } = authorization(request);
  return scheme === "bearer" && credentials ? credentials : null;
}

/** The key from `Authorization: Bearer <key>` or HTTP Basic with the key as user name. */
export function extractKey(request: Request): string | null {
  const { scheme, credentials } = authorization(request);
  if (scheme !== "basic") return bearerToken(request);
  const decoded = Buffer.from(credentials, "base64").toString("utf8");
  const user = decoded.includes(":") ? decoded.slice(0, decoded.indexOf(":")) : decoded;
  return user || null;
}

const redact = (key: string) => (key.length > 12 ? `${key.slice(0, 8)}…${key.slice(-4)}` : "***");

export async function authenticate(db: Queryable, request: Request, accepts: KeyKind): Promise<AuthenticatedKey> {
  const key = extractKey(request);
  if (!key) {
    throw unauthorized(
      "You did not provide an API key. Send it as a Bearer token (Authorization: Bearer sk_test_...) or as the HTTP Basic user name with an empty password.",
    );
  }
  const found = await findKey(db, key);
  if (!found) {
    const [revoked] = await db.select({ id: apiKeys.id }).from(apiKeys).where(eq(apiKeys.hash, sha256(key))).limit(1);
    throw unauthorized(revoked ? `API key ${redact(key)} has been rolled; use the current key.` : `Invalid API key provided: ${redact(key)}`);
  }
  if (accepts === "secret" && found.kind !== "secret") {
    throw forbidden("This endpoint requires a secret key (sk_test_... or sk_live_...). Publishable keys are accepted only for player sign-up, login and OAuth sign-in.");
  }
  return found;
}

/** In production, bound anywhere but loopback, plain HTTP is refused (keys would travel in clear). */
export function requireHttps(request: Request) {
  if (process.env.NODE_ENV !== "production" || envRaw("ALLOW_HTTP") === "true") return;
  if (listensOnLoopbackOnly()) return;
  const forwarded = request.headers.get("x-forwarded-proto")?.split(",")[0]?.trim();
  const protocol = forwarded ?? new URL(request.url).protocol.replace(":", "");
  if (protocol !== "https") {
    // An operator behind a TLS-terminating proxy sees this on every request until the proxy is trusted: say how.
    const hint = trustedHops() === 0 ? " (Operators: behind a proxy that terminates TLS, set TRUST_PROXY so its X-Forwarded-Proto is believed.)" : "";
    throw forbidden(`Requests must be made over HTTPS.${hint}`, "invalid_request_error");
  }
}
