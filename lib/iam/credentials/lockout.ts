import { and, eq, gt, inArray, max } from "drizzle-orm";
import type { Queryable } from "@/lib/db/client";
import { rateLimitCounters } from "@/lib/db/schema";
import { enforce, hit, limits, projectScope, tooMany } from "@/lib/http/rate-limit";
import { normalisedUserId } from "@/lib/iam/identities";
import { sha256 } from "@/lib/keys/encryption";
import type { ProjectContext } from "@/lib/projects/service";

/**
 * Guessing limits for passwords, kept in the rate-limit table so every instance shares them:
 * per client address (every sign-up, login, reset and link), and per email (wrong passwords).
 */

/** Wrong passwords that lock an email, and for how long it stays locked. */
export const LOCKOUT_FAILURES = 10;
export const LOCKOUT_MS = 15 * 60_000;
const FAILURE_WINDOW = { max: LOCKOUT_FAILURES, windowMs: LOCKOUT_MS };

/** The email, hashed: the rate-limit table holds no addresses of players. */
const emailScope = (ctx: ProjectContext, email: string) => `${projectScope(ctx)}:${sha256(normalisedUserId("email", email)).slice(0, 32)}`;
const failuresBucket = (ctx: ProjectContext, email: string) => `login-failures:${emailScope(ctx, email)}`;
const lockBucket = (ctx: ProjectContext, email: string) => `login-lock:${emailScope(ctx, email)}`;

/**
 * The per-address limit on players' sign-in and sign-up attempts (RATE_LIMIT_AUTH_PER_MINUTE), one budget for every
 * way to sign in: counted before any password is hashed, and before a SIWE sign-up's nonce is used.
 */
export async function limitAddress(db: Queryable, clientAddress: string | undefined, message = "Too many sign-in attempts from your address") {
  await enforce(db, `auth:${clientAddress ?? "unknown"}`, limits.auth(), message);
}

/** A 429 (Retry-After: what is left of the lock) while the email is locked; the same for emails no one signed up with. */
export async function assertNotLocked(db: Queryable, ctx: ProjectContext, email: string, now = Date.now()) {
  const [row] = await db
    .select({ until: max(rateLimitCounters.expiresAt) })
    .from(rateLimitCounters)
    .where(and(eq(rateLimitCounters.bucket, lockBucket(ctx, email)), gt(rateLimitCounters.expiresAt, now)));
  if (row?.until) throw tooMany("Too many wrong passwords for this email; it is locked", Math.max(1, Math.ceil((row.until - now) / 1000)));
}

/**
 * Counts a wrong password. Failures are counted in 15-minute windows, and the previous window's
 * count is added to the current one's: any 10 failures within 15 minutes lock the email (fixed
 * windows alone would let 9 at the end of one window and 9 at the start of the next pass).
 */
export async function recordFailure(db: Queryable, ctx: ProjectContext, email: string, now = Date.now()) {
  const bucket = failuresBucket(ctx, email);
  const current = await hit(db, bucket, FAILURE_WINDOW, now);
  const previousStart = (Math.floor(now / LOCKOUT_MS) - 1) * LOCKOUT_MS;
  const [previous] = await db
    .select({ hits: rateLimitCounters.hits })
    .from(rateLimitCounters)
    .where(and(eq(rateLimitCounters.bucket, bucket), eq(rateLimitCounters.windowStart, previousStart)));
  if (current.hits + (previous?.hits ?? 0) < LOCKOUT_FAILURES) return;
  // Locked from now, not to the window's end; a counter row of its own, removed by the table's cleanup once it ends.
  await db
    .insert(rateLimitCounters)
    .values({ bucket: lockBucket(ctx, email), windowStart: now, expiresAt: now + LOCKOUT_MS, hits: 1 })
    .onConflictDoNothing();
  await clearFailureCount(db, ctx, email);
}

async function clearFailureCount(db: Queryable, ctx: ProjectContext, email: string) {
  await db.delete(rateLimitCounters).where(eq(rateLimitCounters.bucket, failuresBucket(ctx, email)));
}

/** After a successful login the count starts again; a password reset also lifts a lock. */
export async function clearFailures(db: Queryable, ctx: ProjectContext, email: string, options: { unlock?: boolean } = {}) {
  const buckets = [failuresBucket(ctx, email), ...(options.unlock ? [lockBucket(ctx, email)] : [])];
  await db.delete(rateLimitCounters).where(inArray(rateLimitCounters.bucket, buckets));
}
