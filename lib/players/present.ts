import { serializeAccount } from "@/lib/accounts/serializer";
import { accountsOfPlayers } from "@/lib/accounts/service";
import type { Queryable } from "@/lib/db/client";
import { embeddedIntents } from "@/lib/intents/service";
import type { ProjectContext } from "@/lib/projects/service";
import { serializePlayer } from "./serializer";
import type { PlayerRow } from "./service";

/** Players as the API shows them: accounts and latest intents as `{id}`, or in full when expanded. */
export async function presentPlayers(db: Queryable, ctx: ProjectContext, rows: PlayerRow[], expand: readonly string[] | undefined) {
  const ids = rows.map((r) => r.id);
  const [accountsBy, intentsBy] = await Promise.all([
    accountsOfPlayers(db, ctx, ids),
    embeddedIntents(db, "playerId", ids, expand?.includes("transactionIntents") ?? false),
  ]);
  const full = expand?.includes("accounts") ?? false;
  return rows.map((row) =>
    serializePlayer(row, (accountsBy.get(row.id) ?? []).map((a) => (full ? serializeAccount(a) : { id: a.id })), intentsBy.get(row.id) ?? []),
  );
}

export const presentPlayer = async (db: Queryable, ctx: ProjectContext, row: PlayerRow, expand: readonly string[] | undefined) =>
  (await presentPlayers(db, ctx, [row], expand))[0]!;
