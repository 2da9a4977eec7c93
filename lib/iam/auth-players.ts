import { eq, exists, isNull, or, sql, type SQL } from "drizzle-orm";
import type { Queryable } from "@/lib/db/client";
import { playerIdentities, players } from "@/lib/db/schema";
import { inScope } from "@/lib/db/scope";
import { createAccount } from "@/lib/accounts/service";
import { badRequest, conflict, notFound } from "@/lib/errors";
import type { Metadata } from "@/lib/http/fields";
import { listPage, type ListParams } from "@/lib/http/list";
import { findIdentity, identitiesOf, linkIdentity, normalisedUserId, presentAuthPlayer, releaseDeletedIdentity } from "@/lib/iam/identities";
import { revokePlayerSessions } from "@/lib/players/player-sessions";
import { presentPlayers } from "@/lib/players/present";
import { createPlayer, type PlayerRow } from "@/lib/players/service";
import type { ProjectContext } from "@/lib/tenant";

/**
 * The identity API's players (`/iam/v1/players`): players with at least one linked identity, shown
 * as authenticated players (`linkedAccounts`) with the core player beside them (`player`: accounts
 * and latest intents).
 */

export interface CreateAuthPlayer {
  thirdPartyUserId: string;
  thirdPartyProvider: string;
  preGenerateEmbeddedAccount: boolean;
  chainId?: number;
  metadata?: Metadata | null;
}

/** Authenticated players with their core player, in the order given. */
export async function presentWithPlayer(db: Queryable, ctx: ProjectContext, rows: PlayerRow[]) {
  const [identities, core] = await Promise.all([identitiesOf(db, rows.map((r) => r.id)), presentPlayers(db, ctx, rows, undefined)]);
  return rows.map((row, i) => ({ ...presentAuthPlayer(row, identities.get(row.id) ?? []), player: core[i]! }));
}

/**
 * A player for an identity another system already proved (the developer's backend vouches for it
 * with its secret key), optionally with its account on `chainId` made now. An identity already
 * linked to a player is a 409.
 */
export async function createAuthPlayer(db: Queryable, ctx: ProjectContext, input: CreateAuthPlayer): Promise<PlayerRow> {
  if (input.preGenerateEmbeddedAccount && input.chainId === undefined) {
    throw badRequest("chainId is required when preGenerateEmbeddedAccount is true: the chain to create the account on.", {
      chainId: { message: "Required when preGenerateEmbeddedAccount is true." },
    });
  }
  const alreadyLinked = () => conflict(`${input.thirdPartyProvider} user '${input.thirdPartyUserId.slice(0, 200)}' is already linked to a player.`);
  if (await findIdentity(db, ctx, input.thirdPartyProvider, input.thirdPartyUserId)) throw alreadyLinked();
  return db.transaction(async (tx) => {
    await releaseDeletedIdentity(tx, ctx, input.thirdPartyProvider, input.thirdPartyUserId);
    const player = await createPlayer(tx, ctx, { metadata: input.metadata ?? undefined });
    const linked = await linkIdentity(tx, ctx, player.id, { provider: input.thirdPartyProvider, externalUserId: input.thirdPartyUserId });
    // Linked meanwhile by a concurrent request: the unique index decided.
    if (!linked) throw alreadyLinked();
    if (input.preGenerateEmbeddedAccount) await createAccount(tx, ctx, { chainId: input.chainId!, player: player.id });
    return player;
  });
}

export interface ListAuthPlayers extends ListParams {
  email?: string;
  externalUserId?: string;
}

const identityOf = (ctx: ProjectContext, ...conditions: SQL[]) =>
  inScope(playerIdentities, ctx, eq(playerIdentities.playerId, players.id), ...conditions);

/** Players with an identity, newest first; `email` matches the player's or an identity's email, `externalUserId` an identity's user id (any provider). */
export async function listAuthPlayers(db: Queryable, ctx: ProjectContext, input: ListAuthPlayers) {
  const anyIdentity = (...conditions: SQL[]) => exists(db.select({ one: sql`1` }).from(playerIdentities).where(identityOf(ctx, ...conditions)));
  const email = input.email?.trim().toLowerCase();
  const where = inScope(
    players,
    ctx,
    isNull(players.deletedAt),
    anyIdentity(),
    email ? or(sql`lower(${players.email}) = ${email}`, anyIdentity(sql`lower(${playerIdentities.email}) = ${email}`)) : undefined,
    input.externalUserId !== undefined
      ? or(
          anyIdentity(eq(playerIdentities.externalUserId, input.externalUserId)),
          // Emails and wallet addresses are kept lower-cased.
          anyIdentity(eq(playerIdentities.externalUserId, normalisedUserId("email", input.externalUserId))),
        )
      : undefined,
  );
  return listPage(db, players, where, input);
}

/** Deletes the player (as DELETE /v1/players does), its identities, and ends its sessions; answers it as it was. */
export async function deleteAuthPlayer(db: Queryable, ctx: ProjectContext, id: string) {
  return db.transaction(async (tx) => {
    // Locked first: a sign-in linking an identity to this player by email waits, then sees it deleted.
    const [player] = await tx.select().from(players).where(inScope(players, ctx, eq(players.id, id), isNull(players.deletedAt))).for("update");
    if (!player) throw notFound("player", id);
    const [shown] = await presentWithPlayer(tx, ctx, [player]);
    await tx.update(players).set({ deletedAt: new Date() }).where(eq(players.id, id));
    await tx.delete(playerIdentities).where(eq(playerIdentities.playerId, id));
    await revokePlayerSessions(tx, id, "the player was deleted");
    return { ...shown!, deleted: true as const };
  });
}
