import { createLocalJWKSet, errors, type JSONWebKeySet, type JWTHeaderParameters, type FlattenedJWSInput } from "jose";
import { OutboundRefusedError, outboundFetch } from "@/lib/outbound";
import { ProviderUnavailable } from "./types";
import { envNumber } from "@/lib/config";

/**
 * Calls to identity providers. Every URL comes from a configuration a developer set (or a
 * provider's public default), so each goes through the outbound rule (lib/outbound): live mode
 * reaches public https hosts only. Answers are read up to a size limit and within a timeout.
 */

const TIMEOUT_MS = envNumber("PROVIDER_TIMEOUT_MS", 10_000, { above: 0 });
/** Provider answers are small JSON documents; anything larger is not one. */
const MAX_ANSWER_BYTES = 1024 * 1024;

export interface ProviderAnswer {
  status: number;
  /** The parsed JSON body, or null when the body was empty or not JSON. */
  json: unknown;
}

async function readCapped(response: Response): Promise<string> {
  if (!response.body) return "";
  const reader = response.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > MAX_ANSWER_BYTES) {
      await reader.cancel();
      throw new ProviderUnavailable("its answer is larger than 1 MiB");
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks).toString("utf8");
}

/** One request to a provider; only the origin is named in errors (paths and queries may carry tokens). */
export async function providerRequest(
  url: string,
  init: { method?: string; headers?: Record<string, string>; body?: string },
  livemode: boolean,
): Promise<ProviderAnswer> {
  const origin = safeOrigin(url);
  let response: Response;
  try {
    response = await outboundFetch(url, { ...init, headers: { accept: "application/json", ...init.headers }, signal: AbortSignal.timeout(TIMEOUT_MS) }, { livemode });
  } catch (err) {
    if (err instanceof OutboundRefusedError) throw new ProviderUnavailable(`${origin} is not allowed: ${err.message}`);
    const reason = err instanceof Error && err.name === "TimeoutError" ? `no answer within ${TIMEOUT_MS / 1000} s` : "the connection failed";
    throw new ProviderUnavailable(`${origin} could not be reached (${reason})`);
  }
  const text = await readCapped(response);
  let json: unknown = null;
  try {
    json = text ? JSON.parse(text) : null;
  } catch {
    json = null;
  }
  return { status: response.status, json };
}

export function safeOrigin(url: string): string {
  try {
    return new URL(url).origin;
  } catch {
    return "the configured URL";
  }
}

export const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

/** A JSON document from a provider that must answer 200 with an object (discovery, JWKS). */
async function fetchDocument(url: string, livemode: boolean, what: string): Promise<Record<string, unknown>> {
  const { status, json } = await providerRequest(url, {}, livemode);
  if (status !== 200 || !isObject(json)) throw new ProviderUnavailable(`${what} at ${safeOrigin(url)} answered ${status}${isObject(json) ? "" : " without a JSON object"}`);
  return json;
}

/** How long fetched keys and discovery documents are reused, and how soon an unknown key id may refetch them. */
const CACHE_MS = 5 * 60_000;
const REFETCH_AFTER_MS = 30_000;

type KeyResolver = (header: JWTHeaderParameters, token: FlattenedJWSInput) => Promise<CryptoKey>;
interface CachedJwks {
  fetchedAt: number;
  resolve: KeyResolver;
}
const jwksCache = new Map<string, CachedJwks>();
const discoveryCache = new Map<string, { fetchedAt: number; doc: Record<string, unknown> }>();
const cacheKey = (url: string, livemode: boolean) => `${livemode ? "live" : "test"} ${url}`;

async function loadJwks(url: string, livemode: boolean): Promise<CachedJwks> {
  const doc = await fetchDocument(url, livemode, "The JWKS");
  if (!Array.isArray(doc.keys)) throw new ProviderUnavailable(`the JWKS at ${safeOrigin(url)} has no keys array`);
  let resolve: KeyResolver;
  try {
    resolve = createLocalJWKSet(doc as unknown as JSONWebKeySet) as KeyResolver;
  } catch {
    throw new ProviderUnavailable(`the JWKS at ${safeOrigin(url)} is not a valid key set`);
  }
  const entry = { fetchedAt: Date.now(), resolve };
  jwksCache.set(cacheKey(url, livemode), entry);
  return entry;
}

/**
 * A key resolver for jwtVerify over a JWKS fetched through the outbound rule (never by jose
 * itself), cached for a few minutes; a key id it does not know refetches once (the provider
 * rotated its keys), at most every REFETCH_AFTER_MS.
 */
export function remoteKeys(url: string, livemode: boolean): KeyResolver {
  return async (header, token) => {
    let entry = jwksCache.get(cacheKey(url, livemode));
    if (!entry || Date.now() - entry.fetchedAt > CACHE_MS) entry = await loadJwks(url, livemode);
    try {
      return await entry.resolve(header, token);
    } catch (err) {
      if (!(err instanceof errors.JWKSNoMatchingKey) || Date.now() - entry.fetchedAt < REFETCH_AFTER_MS) throw err;
      return (await loadJwks(url, livemode)).resolve(header, token);
    }
  };
}

/** The issuer's discovery document, which must name that same issuer (OpenID Connect Discovery §4.3). */
export async function discover(issuer: string, livemode: boolean): Promise<IssuerEndpoints> {
  const key = cacheKey(issuer, livemode);
  let cached = discoveryCache.get(key);
  if (!cached || Date.now() - cached.fetchedAt > CACHE_MS) {
    const doc = await fetchDocument(`${issuer.replace(/\/$/, "")}/.well-known/openid-configuration`, livemode, "The discovery document");
    cached = { fetchedAt: Date.now(), doc };
    if (doc.issuer !== issuer) throw new ProviderUnavailable(`the discovery document of ${safeOrigin(issuer)} names another issuer (${String(doc.issuer).slice(0, 200)})`);
    if (typeof doc.jwks_uri !== "string") throw new ProviderUnavailable(`the discovery document of ${safeOrigin(issuer)} has no jwks_uri`);
    discoveryCache.set(key, cached);
  }
  const { doc } = cached;
  return {
    jwksUri: doc.jwks_uri as string,
    authorizationEndpoint: typeof doc.authorization_endpoint === "string" ? doc.authorization_endpoint : null,
    tokenEndpoint: typeof doc.token_endpoint === "string" ? doc.token_endpoint : null,
  };
}

export interface IssuerEndpoints {
  jwksUri: string;
  authorizationEndpoint: string | null;
  tokenEndpoint: string | null;
}

/**
 * Endpoints an issuer documents as fixed, used while its discovery document is not at hand. Google's:
 * https://developers.google.com/identity/openid-connect/openid-connect#discovery (the values of
 * https://accounts.google.com/.well-known/openid-configuration).
 */
const KNOWN_ENDPOINTS: Record<string, IssuerEndpoints> = {
  "https://accounts.google.com": {
    jwksUri: "https://www.googleapis.com/oauth2/v3/certs",
    authorizationEndpoint: "https://accounts.google.com/o/oauth2/v2/auth",
    tokenEndpoint: "https://oauth2.googleapis.com/token",
  },
};
/** Background refreshes of a known issuer's discovery document: one at a time, none sooner than REFETCH_AFTER_MS after the last. */
const refreshes = new Map<string, { startedAt: number; running: Promise<void> | null }>();

/**
 * An issuer's endpoints. A known issuer's (Google's) come from its fetched discovery document while that is
 * fresh, else from the documented values at once, with the document fetched in the background (a failure
 * leaves the documented values in use): no request waits on, or fails with, a discovery document it does not
 * need. Any other issuer's come from discovery (ProviderUnavailable when it cannot be fetched).
 */
export async function issuerEndpoints(issuer: string, livemode: boolean): Promise<IssuerEndpoints> {
  const known = KNOWN_ENDPOINTS[issuer];
  if (!known) return discover(issuer, livemode);
  const key = cacheKey(issuer, livemode);
  const cached = discoveryCache.get(key);
  if (cached && Date.now() - cached.fetchedAt <= CACHE_MS) return discover(issuer, livemode);
  const last = refreshes.get(key);
  if (!last || (!last.running && Date.now() - last.startedAt > REFETCH_AFTER_MS)) {
    const entry: { startedAt: number; running: Promise<void> | null } = { startedAt: Date.now(), running: null };
    entry.running = discover(issuer, livemode).then(
      () => undefined,
      () => undefined,
    ).finally(() => {
      entry.running = null;
    });
    refreshes.set(key, entry);
  }
  return known;
}

/** Settles once the background discovery refreshes under way have (tests). */
export async function settledRefreshes() {
  await Promise.all([...refreshes.values()].map((r) => r.running));
}

/** Forgets fetched keys and documents (a configuration changed, or a test starts afresh). */
export function clearProviderCaches() {
  jwksCache.clear();
  discoveryCache.clear();
  refreshes.clear();
}
