// Creates and migrates a new embedded PGlite data directory, then exits. The server runs it as a child the first
// time: initdb and the first migration grow PGlite's WebAssembly memory, which a process never gets back, to
// ~650 MB, while opening a migrated directory takes ~180 MB.
// argv: data directory, migrations folder, PGlite's start parameters as JSON (the ones the server opens with).
import { PGlite } from "@electric-sql/pglite";
import { drizzle } from "drizzle-orm/pglite";
import { migrate } from "drizzle-orm/pglite/migrator";

const [dir, migrationsFolder, params] = process.argv.slice(2);
const client = await PGlite.create(dir, { startParams: JSON.parse(params) });
await migrate(drizzle(client), { migrationsFolder });
await client.close();
