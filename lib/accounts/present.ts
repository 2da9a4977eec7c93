import type { Queryable } from "@/lib/db/client";
import { presentPlayers } from "@/lib/players/present";
import { playersByIds } from "@/lib/players/service";
import type { ProjectContext } from "@/lib/projects/service";
import type { AccountExpand, AccountResponse } from "./schema";
import { serializeAccount } from "./serializer";
import type { AccountRow } from "./service";

/** Accounts as the API shows them, with `player` expanded when asked. */
export async function presentAccounts(db: Queryable, ctx: ProjectContext, rows: AccountRow[], expand: AccountExpand): Promise<AccountResponse[]> {
  if (!expand?.includes("player")) return rows.map((row) => serializeAccount(row));
  const players = await playersByIds(db, ctx, [...new Set(rows.map((r) => r.playerId))]);
  const shown = new Map((await presentPlayers(db, ctx, players, undefined)).map((p) => [p.id, p]));
  return rows.map((row) => serializeAccount(row, shown.get(row.playerId) ?? { id: row.playerId }));
}

export const presentAccount = async (db: Queryable, ctx: ProjectContext, row: AccountRow, expand: AccountExpand) =>
  (await presentAccounts(db, ctx, [row], expand))[0]!;
