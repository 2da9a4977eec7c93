// The latest intents of a player, account, policy or session, as their API shapes embed them: below lib/intents and
// the presenters of those resources, which lib/intents/present in turn embeds.
import { inArray, lte, sql, type AnyColumn, type SQL } from "drizzle-orm";
import type { Queryable } from "@/lib/db/client";
import { transactionIntents } from "@/lib/db/schema";
import { serializeIntent } from "./serializer";

/** The ids of an owner's latest 10 intents, as a column of a statement over owners (`owner` is the owner's id). */
export const latestIntentIdsOf = (column: "playerId" | "accountId" | "policyId" | "sessionId", owner: AnyColumn): SQL<string[]> =>
  // Nested: a single-table select writes the columns of its fields' own chunks unqualified, which would lose the owner's table.
  sql`array(${sql`select ${transactionIntents.id} from ${transactionIntents} where ${transactionIntents[column]} = ${owner} order by ${transactionIntents.createdAt} desc, ${transactionIntents.id} desc limit 10`})`;

/** The latest intents (ids) of players, accounts or policies, for embedding (10 each). */
export async function latestIntentIds(db: Queryable, column: "playerId" | "accountId" | "policyId" | "sessionId", ids: string[]): Promise<Map<string, { id: string }[]>> {
  const by = new Map<string, { id: string }[]>(ids.map((id) => [id, []]));
  if (ids.length === 0) return by;
  const col = transactionIntents[column];
  const ranked = db
    .select({
      id: transactionIntents.id,
      owner: sql<string>`${col}`.as("owner"),
      createdAt: transactionIntents.createdAt,
      rank: sql<number>`row_number() over (partition by ${col} order by ${transactionIntents.createdAt} desc, ${transactionIntents.id} desc)`.as("rank"),
    })
    .from(transactionIntents)
    .where(inArray(col, ids))
    .as("ranked");
  const rows = await db.select({ id: ranked.id, owner: ranked.owner }).from(ranked).where(lte(ranked.rank, 10)).orderBy(ranked.rank);
  for (const row of rows) by.get(row.owner)?.push({ id: row.id });
  return by;
}

/** The latest 10 intents of each owner, as `{id}` or (expanded) as the API shows them. */
export async function embeddedIntents(db: Queryable, column: "playerId" | "accountId" | "policyId" | "sessionId", ids: string[], expanded: boolean) {
  const latest = await latestIntentIds(db, column, ids);
  if (!expanded) return latest;
  const all = [...latest.values()].flat().map((r) => r.id);
  const rows = all.length ? await db.select().from(transactionIntents).where(inArray(transactionIntents.id, all)) : [];
  const byId = new Map(rows.map((r) => [r.id, serializeIntent(r)]));
  return new Map([...latest].map(([owner, refs]) => [owner, refs.map((r) => byId.get(r.id) ?? r)]));
}
