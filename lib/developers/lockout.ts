import { and, eq, sql } from "drizzle-orm";
import type { Queryable } from "@/lib/db/client";
import { rateLimitCounters } from "@/lib/db/schema";

const FAILURE_WINDOW_MS = 15 * 60_000;
const MAX_FAILURES = 10;

// One counter row per email (window 0), in the table every instance shares, so the lock holds
// whichever instance the guesses reach; it runs from the first failure and expires with its row.
const bucketOf = (email: string) => `lockout:${email}`;
const rowOf = (email: string) => and(eq(rateLimitCounters.bucket, bucketOf(email)), eq(rateLimitCounters.windowStart, 0));

/** Guessing passwords: 10 wrong ones for an email lock it for 15 minutes (on every instance). */
export async function isLockedOut(db: Queryable, email: string, now = Date.now()) {
  const [row] = await db.select({ hits: rateLimitCounters.hits, expiresAt: rateLimitCounters.expiresAt }).from(rateLimitCounters).where(rowOf(email));
  return Boolean(row && row.expiresAt > now && row.hits >= MAX_FAILURES);
}

export async function recordSignIn(db: Queryable, email: string, ok: boolean, now = Date.now()) {
  if (ok) {
    await db.delete(rateLimitCounters).where(rowOf(email));
    return;
  }
  const t = rateLimitCounters;
  const expired = sql`${t.expiresAt} <= ${now}`;
  await db
    .insert(t)
    .values({ bucket: bucketOf(email), windowStart: 0, expiresAt: now + FAILURE_WINDOW_MS, hits: 1 })
    .onConflictDoUpdate({
      target: [t.bucket, t.windowStart],
      // Both read the row as it was: a failure after the window starts a new one.
      set: {
        hits: sql`case when ${expired} then 1 else ${t.hits} + 1 end`,
        expiresAt: sql`case when ${expired} then ${now + FAILURE_WINDOW_MS}::bigint else ${t.expiresAt} end`,
      },
    });
}
