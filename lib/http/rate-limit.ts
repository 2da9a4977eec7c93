import { lt, sql } from "drizzle-orm";
import type { Queryable } from "@/lib/db/client";
import { rateLimitCounters } from "@/lib/db/schema";
import { envNumber } from "@/lib/config";
import { ApiError } from "./errors";
import { log } from "@/lib/log";

/**
 * Rate limits kept in the database, so every instance behind a load balancer counts into the
 * same buckets (and PGlite behaves the same way): one fixed-window counter row per bucket and
 * window, bumped by a single upsert.
 */
export interface Limit {
  /** Requests allowed per window; 0 or less turns the limit off. */
  max: number;
  windowMs: number;
}

/** The limits in force, read at each call so tests (and operators) can change them by environment. */
export const limits = {
  /** API requests per project and mode, whichever of its keys they use. */
  api: (): Limit => ({ max: envNumber("RATE_LIMIT_PER_SECOND", 200), windowMs: 1000 }),
  /**
   * Intent creation and contract reads (chain work) per project and mode: a share one project cannot
   * exceed. Counted over 10 s windows, so a burst (100 first intents sent at once) passes while the
   * sustained rate stays bounded.
   */
  expensive: (): Limit => ({ max: envNumber("RATE_LIMIT_EXPENSIVE_PER_SECOND", 50) * 10, windowMs: 10_000 }),
  /** Sign-in and sign-up attempts per client address. */
  auth: (): Limit => ({ max: envNumber("RATE_LIMIT_AUTH_PER_MINUTE", 10), windowMs: 60_000 }),
  /** Other unauthenticated routes (the signing page's endpoints, claim and invite links) per client address. */
  public: (): Limit => ({ max: envNumber("RATE_LIMIT_PUBLIC_PER_MINUTE", 300), windowMs: 60_000 }),
};

/** The operations that do chain work (simulation, RPC reads, a relay queued): their own smaller per-project share. */
export const EXPENSIVE_OPERATIONS: ReadonlySet<string> = new Set([
  "createTransactionIntent",
  "signature",
  "deployAccount",
  "readContract",
  "requestTransferOwnership",
  "cancelTransferOwnership",
  "startRecovery",
  "completeRecovery",
  "withdrawFromPolicy",
  "syncAccount",
  // Sessions: writes build operations; reads ask the chain whether each key is active.
  "createSession",
  "revokeSession",
  "signatureSession",
  "getPlayerSessions",
  "getSession",
  // Swaps: a quote prices every route on chain and simulates the operation.
  "quoteSwap",
  "createSwap",
  // Inventories read balances from the chain (nft ones may first index the contracts' transfers).
  "getPlayerNativeInventory",
  "getPlayerCryptoCurrencyInventory",
  "getPlayerNftInventory",
  "getAccountNativeInventory",
  "getAccountCryptoCurrencyInventory",
  "getAccountNftInventory",
]);

const CLEANUP_EVERY_MS = 60_000;
const state = globalThis as unknown as { __rateLimitCleanup?: number };

/** Deletes counters whose window has ended, at most once a minute per process, off the request's path. */
function cleanUp(db: Queryable, now: number) {
  if (now - (state.__rateLimitCleanup ?? 0) < CLEANUP_EVERY_MS) return;
  state.__rateLimitCleanup = now;
  db.delete(rateLimitCounters)
    .where(lt(rateLimitCounters.expiresAt, now))
    .catch((err: unknown) => log.warn({ err }, "rate-limit cleanup failed"));
}

type Outcome = { allowed: boolean; hits: number; retryAfter: number };

/** Counts one hit in each bucket, in one statement; answers, per bucket, whether it is over its limit and when its window ends. */
export async function hitAll(db: Queryable, buckets: { bucket: string; limit: Limit }[], now = Date.now()): Promise<Outcome[]> {
  const counted = buckets.filter((b) => b.limit.max > 0);
  const rows = counted.map(({ bucket, limit }) => {
    const windowStart = Math.floor(now / limit.windowMs) * limit.windowMs;
    return { bucket, windowStart, expiresAt: windowStart + limit.windowMs, hits: 1 };
  });
  const returned = rows.length
    ? await db
        .insert(rateLimitCounters)
        .values(rows)
        .onConflictDoUpdate({ target: [rateLimitCounters.bucket, rateLimitCounters.windowStart], set: { hits: sql`${rateLimitCounters.hits} + 1` } })
        .returning({ bucket: rateLimitCounters.bucket, hits: rateLimitCounters.hits })
    : [];
  if (rows.length) cleanUp(db, now);
  return buckets.map(({ bucket, limit }) => {
    const row = rows.find((r) => r.bucket === bucket);
    if (!row) return { allowed: true, hits: 0, retryAfter: 0 };
    const hits = returned.find((r) => r.bucket === bucket)!.hits;
    return { allowed: hits <= limit.max, hits, retryAfter: Math.max(1, Math.ceil((row.expiresAt - now) / 1000)) };
  });
}

/** Counts one hit in the bucket; answers whether it is over the limit, and when the window ends. */
export async function hit(db: Queryable, bucket: string, limit: Limit, now = Date.now()): Promise<Outcome> {
  const [outcome] = await hitAll(db, [{ bucket, limit }], now);
  return outcome!;
}

export const tooMany = (message: string, retryAfter: number) =>
  new ApiError(429, "rate_limit_error", `${message}; retry after ${retryAfter}s.`, undefined, { "retry-after": String(retryAfter) });

/** Throws a 429 `rate_limit_error` (with Retry-After) once the bucket is over its limit. */
export async function enforce(db: Queryable, bucket: string, limit: Limit, message: string, now = Date.now()) {
  const result = await hit(db, bucket, limit, now);
  if (!result.allowed) throw tooMany(message, result.retryAfter);
}

/**
 * The API's limit, per project and mode rather than per key (more keys buy no more requests),
 * and the smaller share of chain work for the operations that do it.
 */
export const projectScope = (project: { projectId: string; livemode: boolean }) => `${project.projectId}:${project.livemode ? "live" : "test"}`;

export async function takeToken(db: Queryable, project: { projectId: string; livemode: boolean }, operationId: string, now = Date.now()) {
  const scope = projectScope(project);
  const api = limits.api();
  if (!(api.max > 0)) return; // RATE_LIMIT_PER_SECOND=0 turns the API's limits off, the chain share with them
  const buckets = [{ bucket: `api:${scope}`, limit: api }];
  if (EXPENSIVE_OPERATIONS.has(operationId)) buckets.push({ bucket: `chain:${scope}`, limit: limits.expensive() });
  // One statement for both: the request's whole cost of limiting is a single round trip.
  const [general, chain] = await hitAll(db, buckets, now);
  if (!general!.allowed) throw tooMany("Too many requests for this project", general!.retryAfter);
  if (chain && !chain.allowed) throw tooMany(`Too many ${operationId} requests for this project`, chain.retryAfter);
}
