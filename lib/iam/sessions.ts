import crypto from "node:crypto";
import { and, eq, isNull, sql } from "drizzle-orm";
import type { Queryable } from "@/lib/db/client";
import { playerSessions } from "@/lib/db/schema";
import { inScope } from "@/lib/db/scope";
import { newId } from "@/lib/ids";
import { decrypt, encrypt, sameSecret, sha256 } from "@/lib/keys/encryption";
import type { ProjectContext } from "@/lib/tenant";
import { issuePlayerToken, verifyPlayerToken, InvalidPlayerToken, type PlayerTokenClaims } from "./tokens";
import { envNumber } from "@/lib/config";

/** A refresh token is good for this long after its session was opened or last refreshed. */
export const REFRESH_TTL_SECONDS = envNumber("PLAYER_REFRESH_TTL_SECONDS", 30 * 86_400, { min: 0 });

export interface IssuedTokens {
  /** The player token (JWT), for the game's requests and for verification. */
  token: string;
  refreshToken: string;
  sessionId: string;
}

/** The AAD a session's refresh secret is sealed with (lib/key-rotation.ts reseals it with it). */
export const sessionSecretAad = (sessionId: string) => `player-session:${sessionId}`;

/**
 * `<session id>.<generation>.<HMAC of both under the session's secret>`: any generation's token can
 * be recomputed and checked, so an earlier one presented again is recognised as reuse only when it
 * is genuine, and nobody who merely knows the session id (the `sid` of every player token) can end it.
 */
const refreshTokenOf = (sessionId: string, generation: number, secret: Buffer) =>
  `${sessionId}.${generation}.${crypto.createHmac("sha256", secret).update(`${sessionId}.${generation}`).digest("base64url")}`;

/** Opens a session for a player who just proved who they are (with `provider`), and answers its tokens. */
export async function openSession(db: Queryable, ctx: ProjectContext, playerId: string, provider: string): Promise<IssuedTokens> {
  const id = newId("playerSession");
  const secret = crypto.randomBytes(32);
  const refreshToken = refreshTokenOf(id, 0, secret);
  const [opened] = await db.insert(playerSessions).values({
    id,
    ...ctx,
    playerId,
    provider,
    refreshHash: sha256(refreshToken),
    encryptedSecret: encrypt(secret.toString("base64url"), sessionSecretAad(id)),
    expiresAt: sql`now() + make_interval(secs => ${REFRESH_TTL_SECONDS})`,
  }).returning({ createdAt: playerSessions.createdAt });
  return { token: await issuePlayerToken(db, ctx, playerId, id, opened!.createdAt), refreshToken, sessionId: id };
}

export class SessionError extends Error {}

/**
 * Trades a refresh token for new tokens, rotating it. A genuine token of an earlier generation
 * means it was copied: the whole session is revoked, so neither the thief nor the player keeps it.
 * The token's secret is checked first: one that does not authenticate is only invalid, whatever
 * session and generation it names.
 */
export async function refreshSession(db: Queryable, ctx: ProjectContext, refreshToken: string): Promise<IssuedTokens> {
  const [sessionId, generationText] = refreshToken.split(".");
  const generation = Number(generationText);
  if (!sessionId?.startsWith("pss_") || !/^\d{1,9}$/.test(generationText ?? "") || sessionId.length > 100) throw new SessionError("invalid refresh token");
  const [session] = await db
    .select()
    .from(playerSessions)
    .where(inScope(playerSessions, ctx, eq(playerSessions.id, sessionId)));
  if (!session) throw new SessionError("invalid refresh token");
  if (session.revokedAt) throw new SessionError("the session was ended");
  if (session.expiresAt.getTime() <= Date.now()) throw new SessionError("the session expired");
  const secret = session.encryptedSecret ? Buffer.from(decrypt(session.encryptedSecret, sessionSecretAad(session.id)), "base64url") : null;
  const current = generation === session.generation && sameSecret(sha256(refreshToken), session.refreshHash);
  // A session opened before secrets were kept can only check its current token.
  const past = !current && secret !== null && generation < session.generation && sameSecret(refreshToken, refreshTokenOf(session.id, generation, secret));
  if (past) {
    await revokeSession(db, session.id, "a refresh token was used twice");
    throw new SessionError("refresh token already used: the session is ended");
  }
  if (!current) throw new SessionError("invalid refresh token");
  const next = secret ? refreshTokenOf(session.id, generation + 1, secret) : `${session.id}.${generation + 1}.${crypto.randomBytes(32).toString("base64url")}`;
  // Conditional on the generation: of two concurrent refreshes with the same token, one wins and the other is a reuse.
  const [rotated] = await db
    .update(playerSessions)
    .set({
      refreshHash: sha256(next),
      generation: generation + 1,
      lastUsedAt: sql`now()`,
      expiresAt: sql`now() + make_interval(secs => ${REFRESH_TTL_SECONDS})`,
    })
    .where(and(eq(playerSessions.id, session.id), eq(playerSessions.generation, generation), isNull(playerSessions.revokedAt)))
    .returning({ id: playerSessions.id });
  if (!rotated) {
    await revokeSession(db, session.id, "a refresh token was used twice");
    throw new SessionError("refresh token already used: the session is ended");
  }
  // The session's sign-in time goes on: a refresh is not a sign-in.
  return { token: await issuePlayerToken(db, ctx, session.playerId, session.id, session.createdAt), refreshToken: next, sessionId: session.id };
}

export async function revokeSession(db: Queryable, sessionId: string, reason: string): Promise<void> {
  await db.update(playerSessions).set({ revokedAt: sql`now()`, revokedReason: reason }).where(and(eq(playerSessions.id, sessionId), isNull(playerSessions.revokedAt)));
}

/** A player token that verifies and whose session is still open (what the API accepts; offline checks can only do the first half). */
export async function verifyPlayerSession(db: Queryable, token: string): Promise<PlayerTokenClaims> {
  const claims = await verifyPlayerToken(db, token);
  const [session] = await db
    .select({ revokedAt: playerSessions.revokedAt, createdAt: playerSessions.createdAt })
    .from(playerSessions)
    .where(and(eq(playerSessions.id, claims.sessionId), eq(playerSessions.playerId, claims.playerId)));
  if (!session) throw new InvalidPlayerToken("no such session");
  if (session.revokedAt) throw new InvalidPlayerToken("the session was ended");
  // The session's own record of the sign-in, whatever the token says (tokens of older releases carry no auth_time).
  return { ...claims, authTime: Math.floor(session.createdAt.getTime() / 1000) };
}
