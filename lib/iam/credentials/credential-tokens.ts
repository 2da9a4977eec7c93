import crypto from "node:crypto";
import { and, eq, gt, isNull, sql } from "drizzle-orm";
import type { Queryable } from "@/lib/db/client";
import { playerCredentialTokens, playerIdentities, players } from "@/lib/db/schema";
import { inScope } from "@/lib/db/scope";
import { badRequest, conflict } from "@/lib/errors";
import { unixSeconds } from "@/lib/http/resource";
import { findIdentity, type IdentityRow } from "@/lib/iam/identities";
import { sha256 } from "@/lib/keys/encryption";
import type { PlayerRow } from "@/lib/players/service";
import type { ProjectContext } from "@/lib/tenant";
import { EMAIL_PROVIDER } from "./passwords";
import { envNumber } from "@/lib/config";

/**
 * Single-use tokens that prove a player reads the mail of an email identity: a password reset,
 * an email verification. This service sends no email: the game's backend asks for a token with
 * its secret key and sends it (in a link of its own) to the address. Only the SHA-256 is stored.
 */
export type CredentialPurpose = "password_reset" | "verify_email";

const SETTINGS: Record<CredentialPurpose, { prefix: string; ttlSeconds: () => number; object: string }> = {
  password_reset: { prefix: "pwr", ttlSeconds: () => envNumber("PLAYER_PASSWORD_RESET_TTL_SECONDS", 3600, { min: 0 }), object: "password_reset" },
  verify_email: { prefix: "vem", ttlSeconds: () => envNumber("PLAYER_EMAIL_VERIFICATION_TTL_SECONDS", 86_400, { min: 0 }), object: "email_verification" },
};

export const credentialObject = (purpose: CredentialPurpose) => SETTINGS[purpose].object;

/** A new token for the email's identity; earlier unused ones for the same purpose stop working. */
export async function issueCredentialToken(db: Queryable, ctx: ProjectContext, email: string, purpose: CredentialPurpose) {
  const found = await findIdentity(db, ctx, EMAIL_PROVIDER, email);
  if (!found) {
    const message = `No player of this project signs in with the email '${email}'.`;
    throw badRequest(message, { email: { value: email, message } });
  }
  const { identity } = found;
  if (purpose === "verify_email" && identity.emailVerifiedAt) throw conflict("This email is already verified.");
  const { prefix, ttlSeconds } = SETTINGS[purpose];
  const token = `${prefix}_${crypto.randomBytes(32).toString("base64url")}`;
  const expiresAt = new Date(Date.now() + ttlSeconds() * 1000);
  await db.transaction(async (tx) => {
    await tx
      .update(playerCredentialTokens)
      .set({ usedAt: sql`now()` })
      .where(and(eq(playerCredentialTokens.identityId, identity.id), eq(playerCredentialTokens.purpose, purpose), isNull(playerCredentialTokens.usedAt)));
    await tx.insert(playerCredentialTokens).values({ tokenHash: sha256(token), ...ctx, identityId: identity.id, purpose, expiresAt });
  });
  return { object: SETTINGS[purpose].object, email: identity.email ?? email, playerId: found.player.id, token, expiresAt: unixSeconds(expiresAt) };
}

/**
 * Uses up a token of the project and mode for `purpose`: one conditional update, so of two
 * requests with the same token only one gets through. Answers the identity and its player.
 */
export async function consumeCredentialToken(
  db: Queryable,
  ctx: ProjectContext,
  token: string,
  purpose: CredentialPurpose,
): Promise<{ identity: IdentityRow; player: PlayerRow }> {
  const hash = sha256(token);
  const mine = inScope(
    playerCredentialTokens,
    ctx,
    eq(playerCredentialTokens.tokenHash, hash),
    eq(playerCredentialTokens.purpose, purpose),
  );
  const [used] = await db
    .update(playerCredentialTokens)
    .set({ usedAt: sql`now()` })
    .where(and(mine, isNull(playerCredentialTokens.usedAt), gt(playerCredentialTokens.expiresAt, sql`now()`)))
    .returning({ identityId: playerCredentialTokens.identityId });
  if (!used) {
    const [row] = await db.select({ usedAt: playerCredentialTokens.usedAt }).from(playerCredentialTokens).where(mine);
    const why = !row ? "is not a token of this project and mode" : row.usedAt ? "was already used (or replaced by a newer one)" : "has expired";
    const message = `The token ${why}.`;
    throw badRequest(`Invalid parameter token: ${message}`, { token: { message } });
  }
  const [row] = await db
    .select({ identity: playerIdentities, player: players })
    .from(playerIdentities)
    .innerJoin(players, eq(players.id, playerIdentities.playerId))
    .where(eq(playerIdentities.id, used.identityId));
  if (!row || row.player.deletedAt) {
    const message = "The token's player was deleted.";
    throw badRequest(`Invalid parameter token: ${message}`, { token: { message } });
  }
  return row;
}
