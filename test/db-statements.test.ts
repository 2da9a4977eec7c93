import { sql } from "drizzle-orm";
import { afterAll, describe, expect, it } from "vitest";
import { closeDb, getDb } from "@/lib/db/client";
import { players } from "@/lib/db/schema";
import { metrics } from "@/lib/metrics";

const counted = async () => (await metrics.dbStatements.get()).values[0]?.value ?? 0;

/** How far `run` moves db_statements_total (nothing else in this file's process uses the database meanwhile). */
async function statementsOf(run: () => Promise<unknown>): Promise<number> {
  const before = await counted();
  await run();
  return (await counted()) - before;
}

// On PGlite or PostgreSQL, whichever this run uses (DATABASE_URL): what `npm run bench` divides by landed intents.
describe(`db_statements_total (${process.env.DATABASE_URL ? "PostgreSQL" : "PGlite"})`, () => {
  afterAll(closeDb);

  it("counts each statement sent: a query, a prepared one again, a failed one, and a transaction's BEGIN and COMMIT or ROLLBACK", async () => {
    const db = await getDb();
    await db.execute(sql`select 1`); // opens the connection (postgres.js looks its array types up then: one more statement)

    expect(await statementsOf(() => db.execute(sql`select 1`))).toBe(1);
    // The same query twice: named and prepared on the connection by its first run on PostgreSQL, executed again after.
    const page = () => db.select({ id: players.id }).from(players).where(sql`${players.name} = ${"nobody"}`).limit(1);
    expect(await statementsOf(async () => (await page(), await page()))).toBe(2);
    expect(await statementsOf(() => db.execute(sql`select 1 / 0`).catch(() => {}))).toBe(1);
    expect(
      await statementsOf(() =>
        db.transaction(async (tx) => {
          await tx.execute(sql`select 1`);
          await tx.select({ id: players.id }).from(players).limit(1);
        }),
      ),
    ).toBe(4);
    // Rolled back by an error in the body, or by drizzle's tx.rollback(): BEGIN, the query, ROLLBACK.
    const abandoned = () =>
      db.transaction(async (tx) => {
        await tx.execute(sql`select 1`);
        throw new Error("abandoned");
      });
    expect(await statementsOf(() => abandoned().catch(() => {}))).toBe(3);
    const rolledBack = () =>
      db.transaction(async (tx) => {
        await tx.execute(sql`select 1`);
        tx.rollback();
      });
    expect(await statementsOf(() => rolledBack().catch(() => {}))).toBe(3);
  });
});
