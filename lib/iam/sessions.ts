import crypto from "node:crypto";
import { and, eq, isNull, sql } from "drizzle-orm";
import type { Queryable } from "@/lib/db/client";
import { playerSessions } from "@/lib/db/schema";
import { inScope } from "@/lib/db/scope";
import { newId } from "@/lib/ids";
import { sha256 } from "@/lib/keys/encryption";
import type { ProjectContext } from "@/lib/projects/service";
import { issuePlayerToken, verifyPlayerToken, InvalidPlayerToken, type PlayerTokenClaims } from "./tokens";

/** A refresh token is good for this long after its session was opened or last refreshed. */
export const REFRESH_TTL_SECONDS = Number(process.env.PLAYER_REFRESH_TTL_SECONDS ?? 30 * 86_400);

export interface IssuedTokens {
  /** The player token (JWT), for the game's requests and for verification. */
  token: string;
  refreshToken: string;
  sessionId: string;
}

/** `<session id>.<generation>.<random>`: the session and generation let a reused old token be recognised. */
const refreshTokenOf = (sessionId: string, generation: number) => `${sessionId}.${generation}.${crypto.randomBytes(32).toString("base64url")}`;

/** Opens a session for a player who just proved who they are (with `provider`), and answers its tokens. */
export async function openSession(db: Queryable, ctx: ProjectContext, playerId: string, provider: string): Promise<IssuedTokens> {
  const id = newId("playerSession");
  const refreshToken = refreshTokenOf(id, 0);
  await db.insert(playerSessions).values({
    id,
    ...ctx,
    playerId,
    provider,
    refreshHash: sha256(refreshToken),
    expiresAt: sql`now() + make_interval(secs => ${REFRESH_TTL_SECONDS})`,
  });
  return { token: await issuePlayerToken(db, ctx, playerId, id), refreshToken, sessionId: id };
}

export class SessionError extends Error {}

/**
 * Trades a refresh token for new tokens, rotating it. Presenting a token of an earlier generation
 * means it was copied: the whole session is revoked, so neither the thief nor the player keeps it.
 */
export async function refreshSession(db: Queryable, ctx: ProjectContext, refreshToken: string): Promise<IssuedTokens> {
  const [sessionId, generationText] = refreshToken.split(".");
  const generation = Number(generationText);
  if (!sessionId?.startsWith("pss_") || !Number.isSafeInteger(generation) || sessionId.length > 100) throw new SessionError("invalid refresh token");
  const [session] = await db
    .select()
    .from(playerSessions)
    .where(inScope(playerSessions, ctx, eq(playerSessions.id, sessionId)));
  if (!session) throw new SessionError("invalid refresh token");
  if (session.revokedAt) throw new SessionError("the session was ended");
  if (session.expiresAt.getTime() <= Date.now()) throw new SessionError("the session expired");
  if (generation < session.generation) {
    await revokeSession(db, session.id, "a refresh token was used twice");
    throw new SessionError("refresh token already used: the session is ended");
  }
  if (generation !== session.generation || !crypto.timingSafeEqual(Buffer.from(sha256(refreshToken)), Buffer.from(session.refreshHash))) {
    throw new SessionError("invalid refresh token");
  }
  const next = refreshTokenOf(session.id, generation + 1);
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
  return { token: await issuePlayerToken(db, ctx, session.playerId, session.id), refreshToken: next, sessionId: session.id };
}

export async function revokeSession(db: Queryable, sessionId: string, reason: string): Promise<void> {
  await db.update(playerSessions).set({ revokedAt: sql`now()`, revokedReason: reason }).where(and(eq(playerSessions.id, sessionId), isNull(playerSessions.revokedAt)));
}

/** Ends every session of a player (deletion, a password reset). */
export async function revokePlayerSessions(db: Queryable, playerId: string, reason: string): Promise<void> {
  await db.update(playerSessions).set({ revokedAt: sql`now()`, revokedReason: reason }).where(and(eq(playerSessions.playerId, playerId), isNull(playerSessions.revokedAt)));
}

/** A player token that verifies and whose session is still open (what the API accepts; offline checks can only do the first half). */
export async function verifyPlayerSession(db: Queryable, token: string): Promise<PlayerTokenClaims> {
  const claims = await verifyPlayerToken(db, token);
  const [session] = await db
    .select({ revokedAt: playerSessions.revokedAt })
    .from(playerSessions)
    .where(and(eq(playerSessions.id, claims.sessionId), eq(playerSessions.playerId, claims.playerId)));
  if (!session) throw new InvalidPlayerToken("no such session");
  if (session.revokedAt) throw new InvalidPlayerToken("the session was ended");
  return claims;
}
