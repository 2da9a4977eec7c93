import { lt, sql } from "drizzle-orm";
import type { Queryable } from "@/lib/db/client";
import { rateLimitCounters } from "@/lib/db/schema";
import { envNumber } from "@/lib/config";
import { tooManyRequests } from "@/lib/errors";
import { log } from "@/lib/log";
import type { Operation } from "./operation";
import { processSingleton } from "@/lib/singleton";

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
  /**
   * Requests with a project's public credentials (publishable key, player tokens, signing links, the
   * paymaster service URL), which a game ships to everyone: a budget per project and mode beside the
   * secret key's, so a flood of them never answers 429 to the developer's backend.
   */
  publicApi: (): Limit => ({ max: envNumber("RATE_LIMIT_PUBLIC_API_PER_SECOND", 100), windowMs: 1000 }),
  /** Each client address's share of a project's public budget (an IPv6 /64 is one address), so one cannot take it all. */
  publicApiPerAddress: (): Limit => ({ max: envNumber("RATE_LIMIT_PUBLIC_API_PER_ADDRESS_PER_MINUTE", 600), windowMs: 60_000 }),
  /** Chain work with public credentials per project and mode: the public budget's chain share, over 10 s windows as the secret key's. */
  publicExpensive: (): Limit => ({ max: envNumber("RATE_LIMIT_PUBLIC_API_EXPENSIVE_PER_SECOND", 20) * 10, windowMs: 10_000 }),
  /** Sign-in and sign-up attempts per client address. */
  auth: (): Limit => ({ max: envNumber("RATE_LIMIT_AUTH_PER_MINUTE", 10), windowMs: 60_000 }),
  /** Other unauthenticated routes (the signing page's endpoints, claim and invite links) per client address. */
  public: (): Limit => ({ max: envNumber("RATE_LIMIT_PUBLIC_PER_MINUTE", 300), windowMs: 60_000 }),
};

const CLEANUP_EVERY_MS = 60_000;
const state = processSingleton("rateLimitCleanup", () => ({ at: 0 }));

/** Deletes counters whose window has ended, at most once a minute per process, off the request's path. */
function cleanUp(db: Queryable, now: number) {
  if (now - state.at < CLEANUP_EVERY_MS) return;
  state.at = now;
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

/** Throws a 429 `rate_limit_error` (with Retry-After) once the bucket is over its limit. */
export async function enforce(db: Queryable, bucket: string, limit: Limit, message: string, now = Date.now()) {
  const result = await hit(db, bucket, limit, now);
  if (!result.allowed) throw tooManyRequests(message, result.retryAfter);
}

/**
 * The API's limits, per project and mode rather than per key (more keys buy no more requests), and
 * the smaller share of chain work for the operations that do it. The secret key has one budget, the
 * public credentials another (counted per client address first), so neither spends the other's.
 */
export const projectScope = (project: { projectId: string; livemode: boolean }) => `${project.projectId}:${project.livemode ? "live" : "test"}`;

/** Whose budget a request spends: the secret key's, or the public credentials' from a client address (clientAddress). */
export type Spender = { budget: "secret" } | { budget: "public"; address: string };
const SECRET: Spender = { budget: "secret" };

/** The concurrency lane (lib/http/concurrency.ts) of a request's chain work: public callers queue in a lane of their own too. */
export const laneOf = (project: { projectId: string; livemode: boolean }, spender: Spender = SECRET) =>
  spender.budget === "public" ? `${projectScope(project)}:public` : projectScope(project);

type Bucket = { bucket: string; limit: Limit; message: string };

/** Spends a request to `op` from the project's budgets: also from its chain share when the operation declares `cost: "chain"`. */
export async function takeToken(db: Queryable, project: { projectId: string; livemode: boolean }, op: Pick<Operation, "operationId" | "cost">, now = Date.now(), spender: Spender = SECRET) {
  const scope = projectScope(project);
  if (!(limits.api().max > 0)) return; // RATE_LIMIT_PER_SECOND=0 turns the API's limits off: the chain shares and the public budget with them
  const chain = op.cost === "chain";
  let buckets: Bucket[];
  if (spender.budget === "public") {
    // The address's share first, alone: a request it refuses must not spend the project's public budget,
    // or one address over its share would still starve the project's other players.
    const perAddress = { bucket: `public-api:${scope}@${spender.address}`, limit: limits.publicApiPerAddress(), message: "Too many requests with this project's public credentials from your address" };
    await check(db, [perAddress], now);
    buckets = [{ bucket: `public-api:${scope}`, limit: limits.publicApi(), message: "Too many requests with this project's public credentials" }];
    if (chain) buckets.push({ bucket: `public-chain:${scope}`, limit: limits.publicExpensive(), message: `Too many ${op.operationId} requests with this project's public credentials` });
  } else {
    buckets = [{ bucket: `api:${scope}`, limit: limits.api(), message: "Too many requests for this project" }];
    if (chain) buckets.push({ bucket: `chain:${scope}`, limit: limits.expensive(), message: `Too many ${op.operationId} requests for this project` });
  }
  // One statement for the project's buckets: the request's whole cost of limiting is a single round trip (two for public callers).
  await check(db, buckets, now);
}

/** Counts a hit in each bucket; throws the first one's 429 that is over its limit. */
async function check(db: Queryable, buckets: Bucket[], now: number) {
  const outcomes = await hitAll(db, buckets, now);
  const refused = outcomes.findIndex((o) => !o.allowed);
  if (refused >= 0) throw tooManyRequests(buckets[refused]!.message, outcomes[refused]!.retryAfter);
}
