import { sql } from "drizzle-orm";
import { boolean, pgTable, text, timestamp } from "drizzle-orm/pg-core";
import { drizzle } from "drizzle-orm/postgres-js";
import postgres from "postgres";
import { describe, expect, it } from "vitest";
import { preparedList } from "@/lib/http/list";
import { createFreshDatabase } from "@/test/helpers/fresh-database";
import { inScope } from "./scope";
import { preparingClient } from "./prepared";

const items = pgTable("items", { id: text().primaryKey(), projectId: text().notNull(), livemode: boolean().notNull(), createdAt: timestamp({ withTimezone: true }).notNull() });
const page = preparedList(items, (p) => ({ where: inScope(items, p) }));

/** One connection (so the session's named statements can be counted), statements prepared or not, as lib/db/client.ts opens it. */
async function withClient(url: string, prepare: boolean, run: (db: ReturnType<typeof drizzle>, named: () => Promise<number>) => Promise<void>) {
  const client = postgres(url, { max: 1, onnotice: () => {}, prepare });
  try {
    const db = drizzle(preparingClient(client, prepare), { casing: "snake_case" });
    await run(db, async () => Number((await client.unsafe("select count(*)::int as n from pg_prepared_statements", [], { prepare: false }))[0]!.n));
  } finally {
    await client.end();
  }
}

// Named statements are PostgreSQL's (PGlite runs one session of its own): on PostgreSQL only.
describe.runIf(process.env.DATABASE_URL)("prepared statements on PostgreSQL", () => {
  it("prepares statements by name, a prepared list page too, and none with DATABASE_PREPARE=false (poolers in transaction mode)", async () => {
    const fresh = await createFreshDatabase(process.env.DATABASE_URL!, "prepared");
    try {
      await withClient(fresh.url, true, async (db) => {
        await db.execute(sql`create table items (id text primary key, project_id text not null, livemode boolean not null, created_at timestamptz not null)`);
        await db.insert(items).values([{ id: "a", projectId: "p", livemode: false, createdAt: new Date(1_000) }, { id: "b", projectId: "p", livemode: false, createdAt: new Date(2_000) }]);
      });
      for (const prepare of [true, false]) {
        await withClient(fresh.url, prepare, async (db, named) => {
          const result = await page(db as never, { projectId: "p", livemode: false }, { limit: 1 }, {});
          expect(result.rows.map((r) => r.id)).toEqual(["b"]);
          expect(result.total).toBe(2);
          expect((await page(db as never, { projectId: "p", livemode: false }, { limit: 5, skip: 5 }, {})).total).toBe(2);
          await db.select().from(items);
          expect(await named(), `prepare: ${prepare}`).toBe(prepare ? 3 : 0);
        });
      }
    } finally {
      await fresh.drop();
    }
  });
});
