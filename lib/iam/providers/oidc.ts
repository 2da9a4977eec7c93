import { decodeJwt, decodeProtectedHeader, errors, importSPKI, jwtVerify, type JWTPayload, type JWTVerifyOptions, type ProtectedHeaderParameters } from "jose";
import { discover, issuerEndpoints, remoteKeys } from "./http";
import { TokenRejected, type ProviderConfig, type VerifiedIdentity, type VerifyOptions } from "./types";

/**
 * The OIDC family: google, oidc, custom (with an issuer, JWKS or public key), firebase and
 * supabase. A token is a JWT whose signature is checked with the issuer's keys (fetched through
 * the outbound rule, or a configured PEM key / Supabase JWT secret), whose `iss` and `aud` are the
 * configuration's, and which is within its lifetime. Claims are read only after all of that. A token that is
 * not a well-formed compact JWT is refused before any network call.
 *
 * - google: issuer `baseUrl` or https://accounts.google.com (keys by discovery; Google's documented JWKS
 *   URL while its discovery document is not at hand), audience `clientId`.
 * - oidc / custom: audience `aud` (or `clientId`); keys from `publicVerificationKey` (PEM), else
 *   `jwksUrl`, else discovery at `baseUrl`; the issuer is checked when `baseUrl` is set.
 * - firebase: issuer https://securetoken.google.com/<projectId>, audience `projectId`, keys from
 *   Google's securetoken JWKS (or `jwksUrl`, for the emulator).
 * - supabase: issuer `<url>/auth/v1`, audience `aud` or "authenticated"; HS256 with the project's
 *   JWT secret when one is configured, else the project's JWKS at `<url>/auth/v1/.well-known/jwks.json`.
 *   Its email counts as verified only with a top-level `email_verified` claim (a custom access token
 *   hook adds one), never by `user_metadata`, which the user can edit.
 */

export const GOOGLE_ISSUER = "https://accounts.google.com";
export const FIREBASE_JWKS_URL = "https://www.googleapis.com/service_accounts/v1/jwk/securetoken@system.gserviceaccount.com";
/** Leeway for clocks that disagree a little (seconds). */
const CLOCK_TOLERANCE = 5;
/** Public-key algorithms only: a JWKS or PEM key never verifies an HMAC token. */
const ASYMMETRIC = ["RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512", "EdDSA"];

type Key = Parameters<typeof jwtVerify>[1];
interface Check {
  key: Key;
  algorithms: string[];
  issuer?: string | string[];
  audience: string;
}

const trimSlash = (url: string) => url.replace(/\/+$/, "");

/**
 * The token's protected header, once it is known to be a compact signed JWT (three parts, a JSON header, a
 * JSON claims set): anything else is refused here, before any key or document is fetched for it.
 */
function wellFormed(token: string): ProtectedHeaderParameters {
  try {
    const header = decodeProtectedHeader(token);
    decodeJwt(token);
    return header;
  } catch {
    throw new TokenRejected("it is not a well-formed JWT (a compact JWS: header.payload.signature)");
  }
}

async function pemKey(pem: string, header: ProtectedHeaderParameters): Promise<Key> {
  // The PEM does not say which algorithm it is for: the token's header does, limited to public-key ones.
  const alg: unknown = header.alg;
  if (typeof alg !== "string" || !ASYMMETRIC.includes(alg)) throw new TokenRejected("its header names no public-key algorithm");
  try {
    return await importSPKI(pem, alg);
  } catch {
    throw new TokenRejected(`the configured public key does not fit the token's algorithm ${alg}`);
  }
}

async function keysFor(config: ProviderConfig, header: ProtectedHeaderParameters, opts: VerifyOptions): Promise<Check> {
  const { settings, baseUrl, clientId } = config;
  switch (config.provider) {
    case "google": {
      const issuer = baseUrl ?? GOOGLE_ISSUER;
      const { jwksUri } = await issuerEndpoints(issuer, opts.livemode);
      // Google's ID tokens name their issuer with or without the scheme.
      return { key: remoteKeys(jwksUri, opts.livemode), algorithms: ASYMMETRIC, issuer: baseUrl ? issuer : [GOOGLE_ISSUER, "accounts.google.com"], audience: clientId ?? "" };
    }
    case "firebase": {
      const projectId = settings.projectId ?? "";
      return { key: remoteKeys(settings.jwksUrl ?? FIREBASE_JWKS_URL, opts.livemode), algorithms: ["RS256"], issuer: `https://securetoken.google.com/${projectId}`, audience: projectId };
    }
    case "supabase": {
      const base = trimSlash(baseUrl ?? "");
      const audience = settings.aud ?? "authenticated";
      if (config.secrets.jwtSecret) return { key: new TextEncoder().encode(config.secrets.jwtSecret), algorithms: ["HS256"], issuer: `${base}/auth/v1`, audience };
      return { key: remoteKeys(settings.jwksUrl ?? `${base}/auth/v1/.well-known/jwks.json`, opts.livemode), algorithms: ASYMMETRIC, issuer: `${base}/auth/v1`, audience };
    }
    default: {
      // oidc, and custom configured with keys rather than an authentication URL.
      const audience = settings.aud ?? clientId ?? "";
      const issuer = baseUrl ?? undefined;
      if (settings.publicVerificationKey) return { key: await pemKey(settings.publicVerificationKey, header), algorithms: ASYMMETRIC, issuer, audience };
      if (settings.jwksUrl) return { key: remoteKeys(settings.jwksUrl, opts.livemode), algorithms: ASYMMETRIC, issuer, audience };
      const { jwksUri } = await discover(baseUrl ?? "", opts.livemode);
      return { key: remoteKeys(jwksUri, opts.livemode), algorithms: ASYMMETRIC, issuer, audience };
    }
  }
}

/** jose's reasons, in words a developer can act on (never the token itself). */
function rejection(err: unknown): TokenRejected | null {
  if (err instanceof errors.JWTExpired) return new TokenRejected("it has expired");
  if (err instanceof errors.JWTClaimValidationFailed) {
    if (err.claim === "iss") return new TokenRejected("it was issued by another issuer than the configured one");
    if (err.claim === "aud") return new TokenRejected("it was issued for another audience (client id) than the configured one");
    return new TokenRejected(`its ${err.claim} claim is not valid (${err.reason})`);
  }
  if (err instanceof errors.JWSSignatureVerificationFailed) return new TokenRejected("its signature does not verify with the provider's keys");
  if (err instanceof errors.JWKSNoMatchingKey) return new TokenRejected("it was signed by a key the provider does not publish");
  if (err instanceof errors.JOSEAlgNotAllowed) return new TokenRejected("it is signed with an algorithm this provider does not use");
  if (err instanceof errors.JWSInvalid || err instanceof errors.JWTInvalid || err instanceof errors.JOSENotSupported) return new TokenRejected("it is not a well-formed signed JWT");
  if (err instanceof errors.JWKSMultipleMatchingKeys) return new TokenRejected("the provider publishes several keys for its key id");
  return null;
}

const str = (v: unknown) => (typeof v === "string" && v.length > 0 ? v : null);

function identityOf(provider: string, payload: JWTPayload): VerifiedIdentity {
  const sub = str(payload.sub);
  if (!sub) throw new TokenRejected("it names no subject (sub)");
  const email = str(payload.email);
  // Only the standard claim, which the issuer itself sets (some send it as text). Supabase's
  // user_metadata.email_verified is never read: its users edit user_metadata (updateUser), and the
  // flag decides whether a sign-in joins an existing player. A Supabase project that wants its
  // confirmed emails to count adds a top-level email_verified claim with a custom access token hook.
  const meta = (payload.user_metadata ?? {}) as Record<string, unknown>;
  const flag = payload.email_verified;
  // A display name only: user-editable metadata is fine for that.
  const name = str(payload.name) ?? str(meta.full_name) ?? str(meta.name);
  return { externalUserId: sub, email: email?.toLowerCase() ?? null, emailVerified: email !== null && (flag === true || flag === "true"), name };
}

export async function verifyOidcToken(config: ProviderConfig, token: string, opts: VerifyOptions): Promise<VerifiedIdentity> {
  const check = await keysFor(config, wellFormed(token), opts);
  const options: JWTVerifyOptions = { audience: check.audience, algorithms: check.algorithms, clockTolerance: CLOCK_TOLERANCE, requiredClaims: ["exp", "sub"] };
  if (check.issuer !== undefined) options.issuer = check.issuer;
  let payload: JWTPayload;
  try {
    ({ payload } = await jwtVerify(token, check.key as Parameters<typeof jwtVerify>[1] & CryptoKey, options));
  } catch (err) {
    const rejected = rejection(err);
    if (rejected) throw rejected;
    throw err;
  }
  if (config.provider === "firebase" && typeof payload.auth_time === "number" && payload.auth_time > Date.now() / 1000 + CLOCK_TOLERANCE) {
    throw new TokenRejected("its auth_time is in the future");
  }
  return identityOf(config.provider, payload);
}
