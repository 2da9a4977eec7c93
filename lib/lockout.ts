import { and, eq, gt, inArray, max } from "drizzle-orm";
import type { Queryable } from "@/lib/db/client";
import { rateLimitCounters } from "@/lib/db/schema";
import { hit } from "@/lib/http/rate-limit";
import { sha256 } from "@/lib/keys/encryption";

/**
 * Guessing limits on a secret (a developer's or a player's password): a count of failures per key (an email, with its
 * project for players), kept in the rate-limit table so the lock holds whichever instance the guesses reach. `max`
 * failures within `ms` lock the key for `ms` from the last of them. Keys are hashed: the table holds no addresses.
 *
 * Failures are counted in fixed windows of `ms`, and the previous window's count is added to the current one's: any
 * `max` failures within `ms` lock the key (fixed windows alone would let max-1 at the end of one window and max-1 at
 * the start of the next pass).
 */
export function lockout(name: string, { max: failures = 10, ms = 15 * 60_000 } = {}) {
  const hashed = (key: string) => sha256(key).slice(0, 32);
  const failuresBucket = (key: string) => `${name}-failures:${hashed(key)}`;
  const lockBucket = (key: string) => `${name}-lock:${hashed(key)}`;
  const window = { max: failures, windowMs: ms };

  return {
    failures,
    ms,
    failuresBucket,
    lockBucket,

    /** Milliseconds left of the key's lock, 0 when it is not locked. */
    async lockedFor(db: Queryable, key: string, now = Date.now()): Promise<number> {
      const [row] = await db
        .select({ until: max(rateLimitCounters.expiresAt) })
        .from(rateLimitCounters)
        .where(and(eq(rateLimitCounters.bucket, lockBucket(key)), gt(rateLimitCounters.expiresAt, now)));
      return row?.until ? row.until - now : 0;
    },

    /** Counts a failure; the one that makes `max` within `ms` locks the key. */
    async recordFailure(db: Queryable, key: string, now = Date.now()) {
      const bucket = failuresBucket(key);
      const current = await hit(db, bucket, window, now);
      const previousStart = (Math.floor(now / ms) - 1) * ms;
      const [previous] = await db
        .select({ hits: rateLimitCounters.hits })
        .from(rateLimitCounters)
        .where(and(eq(rateLimitCounters.bucket, bucket), eq(rateLimitCounters.windowStart, previousStart)));
      if (current.hits + (previous?.hits ?? 0) < failures) return;
      // Locked from now, not to the window's end; a counter row of its own, removed by the table's cleanup once it ends.
      await db.insert(rateLimitCounters).values({ bucket: lockBucket(key), windowStart: now, expiresAt: now + ms, hits: 1 }).onConflictDoNothing();
      await db.delete(rateLimitCounters).where(eq(rateLimitCounters.bucket, bucket));
    },

    /** After a success the count starts again; `unlock` (a password reset) also lifts a lock. */
    async clear(db: Queryable, key: string, options: { unlock?: boolean } = {}) {
      const buckets = [failuresBucket(key), ...(options.unlock ? [lockBucket(key)] : [])];
      await db.delete(rateLimitCounters).where(inArray(rateLimitCounters.bucket, buckets));
    },
  };
}

export type Lockout = ReturnType<typeof lockout>;
