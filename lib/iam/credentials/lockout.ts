import type { Queryable } from "@/lib/db/client";
import { enforce, limits, projectScope } from "@/lib/http/rate-limit";
import { tooManyRequests } from "@/lib/errors";
import { normalisedUserId } from "@/lib/iam/identities";
import { lockout } from "@/lib/lockout";
import type { ProjectContext } from "@/lib/tenant";

/**
 * Guessing limits for passwords, kept in the rate-limit table so every instance shares them:
 * per client address (every sign-up, login, reset and link), and per email (wrong passwords).
 */

/** Wrong passwords lock an email of a project and mode: 10 within 15 minutes, for 15 minutes. */
export const passwordLockout = lockout("login");

const lockKey = (ctx: ProjectContext, email: string) => `${projectScope(ctx)}:${normalisedUserId("email", email)}`;

/**
 * The per-address limit on players' sign-in and sign-up attempts (RATE_LIMIT_AUTH_PER_MINUTE), one budget for every
 * way to sign in: counted before any password is hashed, and before a SIWE sign-up's nonce is used.
 */
export async function limitAddress(db: Queryable, clientAddress: string | undefined, message = "Too many sign-in attempts from your address") {
  await enforce(db, `auth:${clientAddress ?? "unknown"}`, limits.auth(), message);
}

/** A 429 (Retry-After: what is left of the lock) while the email is locked; the same for emails no one signed up with. */
export async function assertNotLocked(db: Queryable, ctx: ProjectContext, email: string, now = Date.now()) {
  const left = await passwordLockout.lockedFor(db, lockKey(ctx, email), now);
  if (left > 0) throw tooManyRequests("Too many wrong passwords for this email; it is locked", Math.max(1, Math.ceil(left / 1000)));
}

/** Counts a wrong password: any 10 within 15 minutes lock the email. */
export const recordFailure = (db: Queryable, ctx: ProjectContext, email: string, now = Date.now()) => passwordLockout.recordFailure(db, lockKey(ctx, email), now);

/** After a successful login the count starts again; a password reset also lifts a lock. */
export const clearFailures = (db: Queryable, ctx: ProjectContext, email: string, options: { unlock?: boolean } = {}) =>
  passwordLockout.clear(db, lockKey(ctx, email), options);
