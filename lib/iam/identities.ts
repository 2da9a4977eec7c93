import { and, asc, eq, inArray, isNotNull, isNull } from "drizzle-orm";
import { z } from "zod";
import type { Queryable } from "@/lib/db/client";
import { playerIdentities, players } from "@/lib/db/schema";
import { inScope } from "@/lib/db/scope";
import { forbidden, unauthorized } from "@/lib/errors";
import { unixSeconds } from "@/lib/http/resource";
import { newId } from "@/lib/ids";
import type { PlayerRow } from "@/lib/players/service";
import type { ProjectContext } from "@/lib/tenant";

export type IdentityRow = typeof playerIdentities.$inferSelect;

/** How a player signs in: "email" (password), "wallet" (SIWE), or a third-party provider's name. */
export interface NewIdentity {
  provider: string;
  /** The provider's user id: an OIDC subject, a wallet address, a lower-cased email for "email". */
  externalUserId: string;
  email?: string | null;
  passwordHash?: string | null;
}

/** The spec's linkedAccounts entry. */
export const linkedAccountResponse = z.object({
  provider: z.string(),
  email: z.string().nullable(),
  externalUserId: z.string(),
  disabled: z.boolean(),
  verified: z.boolean(),
  updatedAt: z.number().int(),
});

/** The spec's authenticated player (identity API). */
export const authPlayerResponse = z.object({
  id: z.string(),
  object: z.literal("player"),
  createdAt: z.number().int(),
  name: z.string().nullable(),
  email: z.string().nullable(),
  linkedAccounts: z.array(linkedAccountResponse),
});
export type AuthPlayerResponse = z.infer<typeof authPlayerResponse>;

/** Identities key on a normalised user id: emails and addresses compare case-insensitively. */
export const normalisedUserId = (provider: string, externalUserId: string) =>
  provider === "email" || provider === "wallet" ? externalUserId.trim().toLowerCase() : externalUserId;

/** The one identity of `provider` with that user id in the project and mode (the unique index's key). */
const identityKey = (ctx: ProjectContext, provider: string, externalUserId: string) =>
  inScope(
    playerIdentities,
    ctx,
    eq(playerIdentities.provider, provider),
    eq(playerIdentities.externalUserId, normalisedUserId(provider, externalUserId)),
  );

/** The identity of `provider` with that user id in the project and mode, with its player (not deleted). */
export async function findIdentity(db: Queryable, ctx: ProjectContext, provider: string, externalUserId: string): Promise<{ identity: IdentityRow; player: PlayerRow } | null> {
  const [row] = await db
    .select({ identity: playerIdentities, player: players })
    .from(playerIdentities)
    .innerJoin(players, eq(players.id, playerIdentities.playerId))
    .where(identityKey(ctx, provider, externalUserId));
  if (!row || row.player.deletedAt) return null;
  return row;
}

/**
 * An identity whose player was deleted (DELETE /v1/players) still holds its place in the unique
 * index; it is released so the same person can sign in again as a new player.
 */
export async function releaseDeletedIdentity(db: Queryable, ctx: ProjectContext, provider: string, externalUserId: string) {
  const deletedPlayers = db.select({ id: players.id }).from(players).where(and(eq(players.projectId, ctx.projectId), isNotNull(players.deletedAt)));
  await db.delete(playerIdentities).where(and(identityKey(ctx, provider, externalUserId), inArray(playerIdentities.playerId, deletedPlayers)));
}

/**
 * Links an identity to a player. Answers null when that provider's user id is already linked in
 * the project and mode (to this player or another): the unique index decides, so concurrent
 * sign-ups with one email make one identity.
 */
export async function linkIdentity(db: Queryable, ctx: ProjectContext, playerId: string, identity: NewIdentity): Promise<IdentityRow | null> {
  const [row] = await db
    .insert(playerIdentities)
    .values({
      id: newId("identity"),
      ...ctx,
      playerId,
      provider: identity.provider,
      externalUserId: normalisedUserId(identity.provider, identity.externalUserId),
      email: identity.email ?? null,
      passwordHash: identity.passwordHash ?? null,
    })
    .onConflictDoNothing()
    .returning();
  return row ?? null;
}

/**
 * The signed-in player's row, locked for the transaction: identity changes of one player (link,
 * unlink) run one at a time, so two unlinks at once cannot leave it with no way to sign in.
 */
export async function lockPlayer(db: Queryable, ctx: ProjectContext, playerId: string): Promise<PlayerRow> {
  const [row] = await db.select().from(players).where(and(eq(players.id, playerId), eq(players.projectId, ctx.projectId))).for("update");
  if (!row || row.deletedAt) throw unauthorized("Invalid player token: its player was deleted.");
  return row;
}

/**
 * Refuses to link another way to sign in to a player whose email sign-in nobody has proven: an
 * address anyone can type may be someone else's, and whatever the typist hangs on that player
 * would stay in it once the address's owner arrives (a reset, a provider that vouches for it).
 */
export async function assertMayLink(db: Queryable, ctx: ProjectContext, playerId: string): Promise<void> {
  const [unproven] = await db
    .select({ email: playerIdentities.email })
    .from(playerIdentities)
    .where(inScope(playerIdentities, ctx, eq(playerIdentities.playerId, playerId), eq(playerIdentities.provider, "email"), isNull(playerIdentities.emailVerifiedAt)));
  if (unproven) {
    throw forbidden("Verify this player's email before linking another way to sign in (POST /iam/v1/password/verify_email/request, then /iam/v1/password/verify_email): until then the address may be someone else's.");
  }
}

/** The identities of players, by player id, oldest first. */
export async function identitiesOf(db: Queryable, playerIds: string[]): Promise<Map<string, IdentityRow[]>> {
  const by = new Map<string, IdentityRow[]>();
  if (playerIds.length === 0) return by;
  const rows = await db.select().from(playerIdentities).where(inArray(playerIdentities.playerId, playerIds)).orderBy(asc(playerIdentities.createdAt));
  for (const row of rows) by.set(row.playerId, [...(by.get(row.playerId) ?? []), row]);
  return by;
}

export const presentLinkedAccount = (row: IdentityRow) => ({
  provider: row.provider,
  email: row.email,
  externalUserId: row.externalUserId,
  disabled: row.disabled,
  verified: row.provider !== "email" || row.emailVerifiedAt !== null,
  updatedAt: unixSeconds(row.updatedAt),
});

export function presentAuthPlayer(player: PlayerRow, identities: IdentityRow[]): AuthPlayerResponse {
  return {
    id: player.id,
    object: "player",
    createdAt: unixSeconds(player.createdAt),
    name: player.name,
    email: player.email,
    linkedAccounts: identities.map(presentLinkedAccount),
  };
}

/** One player with its identities, as the identity API shows it. */
export async function authPlayer(db: Queryable, player: PlayerRow): Promise<AuthPlayerResponse> {
  return presentAuthPlayer(player, (await identitiesOf(db, [player.id])).get(player.id) ?? []);
}

/** What every sign-in answers: the player and its session's tokens. */
export async function signInAnswer(db: Queryable, player: PlayerRow, tokens: { token: string; refreshToken: string }) {
  return { player: await authPlayer(db, player), token: tokens.token, refreshToken: tokens.refreshToken };
}

