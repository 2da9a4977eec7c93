import type { Queryable } from "@/lib/db/client";
import { embeddedIntents } from "@/lib/intent-records/embedded";
import { presentPlayers } from "@/lib/players/present";
import { playersByIds } from "@/lib/players/service";
import type { ProjectContext } from "@/lib/tenant";
import type { AccountExpand, AccountResponse } from "./schema";
import { serializeAccount } from "@/lib/account-records/serializer";
import type { AccountRow } from "./service";

/** Accounts as the API shows them, with `player` and latest intents expanded when asked. */
export async function presentAccounts(db: Queryable, ctx: ProjectContext, rows: AccountRow[], expand: AccountExpand): Promise<AccountResponse[]> {
  const intentsBy = await embeddedIntents(db, "accountId", rows.map((r) => r.id), expand?.includes("transactionIntents") ?? false);
  const shown = new Map<string, AccountResponse["player"]>();
  if (expand?.includes("player")) {
    const players = await playersByIds(db, ctx, [...new Set(rows.map((r) => r.playerId))]);
    for (const p of await presentPlayers(db, ctx, players, undefined)) shown.set(p.id, p);
  }
  return rows.map((row) => serializeAccount(row, shown.get(row.playerId) ?? { id: row.playerId }, intentsBy.get(row.id) ?? []));
}

export const presentAccount = async (db: Queryable, ctx: ProjectContext, row: AccountRow, expand: AccountExpand) =>
  (await presentAccounts(db, ctx, [row], expand))[0]!;
