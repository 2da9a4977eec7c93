import { and, count, eq, gte, lt, ne, sql } from "drizzle-orm";
import type { Queryable } from "@/lib/db/client";
import { playerIdentities, players, playerSessions } from "@/lib/db/schema";
import { badRequest, conflict, unauthorized } from "@/lib/errors";
import { authPlayer, lockPlayer, normalisedUserId, signInAnswer, type IdentityRow } from "@/lib/iam/identities";
import { refreshSession, revokeSession, SessionError, verifyPlayerSession, type IssuedTokens } from "@/lib/iam/sessions";
import { revokePlayerSessions } from "@/lib/players/player-sessions";
import { InvalidPlayerToken, type PlayerTokenClaims } from "@/lib/iam/tokens";
import { hashPassword } from "@/lib/keys/password";
import { getPlayer, type PlayerRow } from "@/lib/players/service";
import type { ProjectContext } from "@/lib/tenant";
import { consumeCredentialToken } from "./credential-tokens";
import { clearFailures, limitAddress } from "./lockout";
import { EMAIL_PROVIDER, linkEmail } from "./passwords";
import { checkPassword } from "./schema";

const playerTokenError = (message: string, what = "player token") => unauthorized(`Invalid ${what}: ${message}`);

/**
 * A player token checked for the caller's project and mode, its session still open. A token of
 * another project, or of the other mode, is refused as if it did not verify: a test-mode token
 * never passes for a live one.
 */
export async function verifyTokenFor(db: Queryable, ctx: ProjectContext, token: string, what = "player token"): Promise<PlayerTokenClaims> {
  let claims: PlayerTokenClaims;
  try {
    claims = await verifyPlayerSession(db, token);
  } catch (err) {
    if (err instanceof InvalidPlayerToken) throw playerTokenError(`${err.message}.`, what);
    throw err;
  }
  if (claims.projectId !== ctx.projectId || claims.livemode !== ctx.livemode) {
    throw playerTokenError(`it was issued for another project or mode than this key's (${ctx.livemode ? "live" : "test"}).`, what);
  }
  return claims;
}

/** The token's player, not deleted (its sessions end with it, so this is a rare race). */
export async function playerOfToken(db: Queryable, ctx: ProjectContext, claims: PlayerTokenClaims): Promise<PlayerRow> {
  try {
    return await getPlayer(db, ctx, claims.playerId);
  } catch {
    throw playerTokenError("its player was deleted.");
  }
}

/** Trades a refresh token for new tokens; any refusal (reuse, revoked, expired, unknown) is a 401. */
export async function refresh(db: Queryable, ctx: ProjectContext, refreshToken: string) {
  let tokens: IssuedTokens;
  try {
    tokens = await refreshSession(db, ctx, refreshToken);
  } catch (err) {
    if (err instanceof SessionError) throw unauthorized(`Invalid refresh token: ${err.message}.`);
    throw err;
  }
  const [session] = await db.select({ playerId: playerSessions.playerId }).from(playerSessions).where(eq(playerSessions.id, tokens.sessionId));
  const player = await getPlayer(db, ctx, session!.playerId).catch(async () => {
    await revokeSession(db, tokens.sessionId, "the player was deleted");
    throw unauthorized("Invalid refresh token: its player was deleted.");
  });
  return signInAnswer(db, player, tokens);
}

/** Ends the token's session. A refresh token sent along must be that session's (it names it). */
export async function logOut(db: Queryable, claims: PlayerTokenClaims, refreshToken?: string) {
  if (refreshToken !== undefined && refreshToken.split(".")[0] !== claims.sessionId) {
    const message = "The refresh token belongs to another session than the player token.";
    throw badRequest(`Invalid parameter refreshToken: ${message}`, { refreshToken: { message } });
  }
  await revokeSession(db, claims.sessionId, "logout");
  return { id: claims.sessionId, object: "player_session" as const, revoked: true as const };
}

/**
 * What a reset takes away: the identities linked to the player while its email was unverified
 * (each identity's createdAt is when it was linked). Whoever reads the mail proves the address
 * only now, so what was hung on the player before that may be the work of someone who typed
 * another person's address. When the email was never verified, that is every other identity,
 * those older than the email too (someone's wallet player with another person's address linked);
 * when it was, those linked between the email and its verification. An identity whose own
 * provider vouches for the same address stays.
 */
async function dropUnprovenIdentities(tx: Queryable, email: IdentityRow) {
  const address = (email.email ?? email.externalUserId).toLowerCase();
  // Compared in the database, at its microsecond precision (a JS Date keeps milliseconds).
  const linked = sql`(select ${playerIdentities.createdAt} from ${playerIdentities} where ${playerIdentities.id} = ${email.id})`;
  const verified = sql`(select ${playerIdentities.emailVerifiedAt} from ${playerIdentities} where ${playerIdentities.id} = ${email.id})`;
  await tx
    .delete(playerIdentities)
    .where(
      and(
        eq(playerIdentities.playerId, email.playerId),
        ne(playerIdentities.id, email.id),
        email.emailVerifiedAt ? and(gte(playerIdentities.createdAt, linked), lt(playerIdentities.createdAt, verified)) : undefined,
        sql`not (coalesce(lower(${playerIdentities.email}), '') = ${address} and ${playerIdentities.emailVerifiedAt} is not null)`,
      ),
    );
}

/** Sets a new password with a reset token; every session of the player ends, and a lock on the email lifts. */
export async function resetPassword(db: Queryable, ctx: ProjectContext, token: string, password: string, clientAddress?: string) {
  checkPassword(password);
  await limitAddress(db, clientAddress);
  const passwordHash = await hashPassword(password);
  const { identity, player } = await db.transaction(async (tx) => {
    const found = await consumeCredentialToken(tx, ctx, token, "password_reset");
    // Reading the reset mail proves the address too.
    await tx
      .update(playerIdentities)
      .set({ passwordHash, updatedAt: sql`now()`, emailVerifiedAt: sql`coalesce(${playerIdentities.emailVerifiedAt}, now())` })
      .where(eq(playerIdentities.id, found.identity.id));
    await dropUnprovenIdentities(tx, found.identity);
    await revokePlayerSessions(tx, found.player.id, "password reset");
    return found;
  });
  await clearFailures(db, ctx, identity.externalUserId, { unlock: true });
  return authPlayer(db, player);
}

/** Marks the email of a verification token verified. */
export async function verifyEmail(db: Queryable, ctx: ProjectContext, token: string) {
  const { player } = await db.transaction(async (tx) => {
    const found = await consumeCredentialToken(tx, ctx, token, "verify_email");
    await tx
      .update(playerIdentities)
      .set({ emailVerifiedAt: sql`coalesce(${playerIdentities.emailVerifiedAt}, now())`, updatedAt: sql`now()` })
      .where(eq(playerIdentities.id, found.identity.id));
    return found;
  });
  return authPlayer(db, player);
}

/** Locks the player's row: link and unlink of one player happen one at a time (the last identity stays). */
/** Adds an email and password to the signed-in player (one email sign-in per player). */
export async function linkEmailPassword(db: Queryable, ctx: ProjectContext, playerId: string, email: string, password: string, clientAddress?: string) {
  checkPassword(password);
  await limitAddress(db, clientAddress);
  const passwordHash = await hashPassword(password);
  const player = await db.transaction(async (tx) => {
    const row = await lockPlayer(tx, ctx, playerId);
    const [existing] = await tx.select({ id: playerIdentities.id }).from(playerIdentities).where(and(eq(playerIdentities.playerId, playerId), eq(playerIdentities.provider, EMAIL_PROVIDER)));
    if (existing) throw conflict("This player already signs in with an email; unlink it first.");
    await linkEmail(tx, ctx, playerId, email, passwordHash);
    if (row.email !== null) return row;
    const [updated] = await tx.update(players).set({ email, updatedAt: new Date() }).where(eq(players.id, playerId)).returning();
    return updated!;
  });
  return authPlayer(db, player);
}

/** Removes the signed-in player's email sign-in, unless it is their only way to sign in. */
export async function unlinkEmail(db: Queryable, ctx: ProjectContext, playerId: string, email: string) {
  const player = await db.transaction(async (tx) => {
    const row = await lockPlayer(tx, ctx, playerId);
    const mine = and(eq(playerIdentities.playerId, playerId), eq(playerIdentities.provider, EMAIL_PROVIDER), eq(playerIdentities.externalUserId, normalisedUserId(EMAIL_PROVIDER, email)));
    const [identity] = await tx.select({ id: playerIdentities.id }).from(playerIdentities).where(mine);
    if (!identity) {
      const message = "The player does not sign in with this email.";
      throw badRequest(`Invalid parameter email: ${message}`, { email: { value: email, message } });
    }
    const [{ n } = { n: 0 }] = await tx.select({ n: count() }).from(playerIdentities).where(eq(playerIdentities.playerId, playerId));
    if (n <= 1) throw conflict("This is the player's only way to sign in; link another before removing it.");
    await tx.delete(playerIdentities).where(eq(playerIdentities.id, identity.id));
    return row;
  });
  return authPlayer(db, player);
}
