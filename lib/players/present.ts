import { serializeAccount } from "@/lib/account-records/serializer";
import { accountIdsOf, accountsOfPlayers } from "@/lib/account-records/queries";
import type { Queryable } from "@/lib/db/client";
import type { TenantScope } from "@/lib/db/scope";
import { players } from "@/lib/db/schema";
import { embeddedIntents, latestIntentIdsOf } from "@/lib/intent-records/embedded";
import type { ProjectContext } from "@/lib/tenant";
import { serializePlayer } from "./serializer";
import type { PlayerRow } from "./service";

/** The ids a player embeds, as columns of the statement that reads the players: no lookups after it. */
export const playerRefColumns = (ctx: TenantScope) => ({ accountIds: accountIdsOf(ctx, players.id), intentIds: latestIntentIdsOf("playerId", players.id) });

export interface PlayerRefs {
  accountIds: string[];
  intentIds: string[];
}

const asRefs = (ids: string[]) => ids.map((id) => ({ id }));

/**
 * Players as the API shows them: accounts and latest intents as `{id}`, or in full when expanded.
 * `refs` (per row, from `playerRefColumns`) spares the lookups of what is not expanded.
 */
export async function presentPlayers(db: Queryable, ctx: ProjectContext, rows: PlayerRow[], expand: readonly string[] | undefined, refs?: PlayerRefs[]) {
  const ids = rows.map((r) => r.id);
  const fullAccounts = expand?.includes("accounts") ?? false;
  const fullIntents = expand?.includes("transactionIntents") ?? false;
  const [accountsBy, intentsBy] = await Promise.all([
    refs && !fullAccounts ? null : accountsOfPlayers(db, ctx, ids),
    refs && !fullIntents ? null : embeddedIntents(db, "playerId", ids, fullIntents),
  ]);
  return rows.map((row, i) =>
    serializePlayer(
      row,
      accountsBy ? (accountsBy.get(row.id) ?? []).map((a) => (fullAccounts ? serializeAccount(a) : { id: a.id })) : asRefs(refs![i]!.accountIds),
      intentsBy ? (intentsBy.get(row.id) ?? []) : asRefs(refs![i]!.intentIds),
    ),
  );
}

export const presentPlayer = async (db: Queryable, ctx: ProjectContext, row: PlayerRow, expand: readonly string[] | undefined) =>
  (await presentPlayers(db, ctx, [row], expand))[0]!;
