import fs from "node:fs";
import path from "node:path";
import { PGlite } from "@electric-sql/pglite";
import { drizzle } from "drizzle-orm/pglite";
import { migrate } from "drizzle-orm/pglite/migrator";

/**
 * One migrated PGlite data directory, dumped once for the run: each test file's in-memory
 * database loads it (PGLITE_TEMPLATE) instead of running initdb and every migration again.
 * The service still runs its migrator on it, which finds nothing to do.
 */
export async function migratedTemplate(dir: string): Promise<string> {
  const db = await PGlite.create();
  try {
    await migrate(drizzle(db, { casing: "snake_case" }), { migrationsFolder: path.join(process.cwd(), "lib/db/migrations") });
    const file = path.join(dir, "pglite-template.tar");
    fs.writeFileSync(file, Buffer.from(await (await db.dumpDataDir("none")).arrayBuffer()));
    return file;
  } finally {
    await db.close();
  }
}
