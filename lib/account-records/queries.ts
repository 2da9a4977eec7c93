// The accounts of players, as the players' API shape embeds them: below lib/players and lib/accounts (whose service
// creates an account for a player).
import { desc, eq, inArray, sql, type AnyColumn, type SQL } from "drizzle-orm";
import type { Queryable } from "@/lib/db/client";
import { accounts } from "@/lib/db/schema";
import { inScope, type TenantScope } from "@/lib/db/scope";
import type { ProjectContext } from "@/lib/tenant";

type AccountRow = typeof accounts.$inferSelect;

/** The accounts of several players (for embedding in player responses), newest first. */
export async function accountsOfPlayers(db: Queryable, ctx: ProjectContext, playerIds: string[]): Promise<Map<string, AccountRow[]>> {
  const byPlayer = new Map<string, AccountRow[]>(playerIds.map((id) => [id, []]));
  if (playerIds.length === 0) return byPlayer;
  const rows = await db
    .select()
    .from(accounts)
    .where(inScope(accounts, ctx, inArray(accounts.playerId, playerIds)))
    .orderBy(desc(accounts.createdAt), desc(accounts.id));
  for (const row of rows) byPlayer.get(row.playerId)?.push(row);
  return byPlayer;
}

/** The ids of a player's accounts, newest first, as a column of a statement over players (`player` is its id). */
export const accountIdsOf = (ctx: TenantScope, player: AnyColumn): SQL<string[]> =>
  // Nested: a single-table select writes the columns of its fields' own chunks unqualified, which would lose the player's table.
  sql`array(${sql`select ${accounts.id} from ${accounts} where ${inScope(accounts, ctx, eq(accounts.playerId, player))} order by ${accounts.createdAt} desc, ${accounts.id} desc`})`;
