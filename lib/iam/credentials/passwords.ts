import type { Queryable } from "@/lib/db/client";
import { conflict, forbidden, unauthorized } from "@/lib/errors";
import { findIdentity, linkIdentity, releaseDeletedIdentity, signInAnswer, type IdentityRow } from "@/lib/iam/identities";
import { openSession } from "@/lib/iam/sessions";
import { decoyHash, hashPassword, verifyPassword } from "@/lib/keys/password";
import { createPlayer } from "@/lib/players/service";
import type { ProjectContext } from "@/lib/tenant";
import { assertNotLocked, clearFailures, limitAddress, recordFailure } from "./lockout";
import { checkPassword, type LoginInput, type SignupInput } from "./schema";

export const EMAIL_PROVIDER = "email";

/** One answer for an unknown email and a wrong password: which emails have accounts stays unknown. */
export const wrongCredentials = () => unauthorized("Invalid email or password.");

export const emailTaken = () => conflict("This email is already used to sign in to another player of this project.");

/** Links an email and password to `playerId`; a 409 when another player signs in with that email. */
export async function linkEmail(db: Queryable, ctx: ProjectContext, playerId: string, email: string, passwordHash: string): Promise<IdentityRow> {
  await releaseDeletedIdentity(db, ctx, EMAIL_PROVIDER, email);
  const identity = await linkIdentity(db, ctx, playerId, { provider: EMAIL_PROVIDER, externalUserId: email, email, passwordHash });
  if (!identity) throw emailTaken();
  return identity;
}

/**
 * A new player who signs in with an email and password. The per-address limit and the email's
 * availability are checked before the (deliberately slow) hash; the unique index settles races.
 */
export async function signUp(db: Queryable, ctx: ProjectContext, input: SignupInput, clientAddress?: string) {
  checkPassword(input.password);
  await limitAddress(db, clientAddress);
  if (await findIdentity(db, ctx, EMAIL_PROVIDER, input.email)) throw emailTaken();
  const passwordHash = await hashPassword(input.password);
  return db.transaction(async (tx) => {
    const player = await createPlayer(tx, ctx, { name: input.name, email: input.email, description: input.description });
    await linkEmail(tx, ctx, player.id, input.email, passwordHash);
    return signInAnswer(tx, player, await openSession(tx, ctx, player.id, EMAIL_PROVIDER));
  });
}

/**
 * Checks an email and password and opens a session. Limits (per address, then the email's lock)
 * come before any hashing; an unknown email costs the same hash as a known one, against a decoy.
 */
export async function logIn(db: Queryable, ctx: ProjectContext, input: LoginInput, clientAddress?: string) {
  // No password rules here: a password set under other rules still logs in, and a short one is just wrong.
  await limitAddress(db, clientAddress);
  await assertNotLocked(db, ctx, input.email);
  const found = await findIdentity(db, ctx, EMAIL_PROVIDER, input.email);
  const matches = await verifyPassword(input.password, found?.identity.passwordHash ?? (await decoyHash()));
  if (!found || !found.identity.passwordHash || !matches) {
    await recordFailure(db, ctx, input.email);
    throw wrongCredentials();
  }
  if (found.identity.disabled) throw forbidden("Signing in with this email is disabled for this player.");
  await clearFailures(db, ctx, input.email);
  return signInAnswer(db, found.player, await openSession(db, ctx, found.player.id, EMAIL_PROVIDER));
}
