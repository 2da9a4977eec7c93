import { execFile } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { promisify } from "node:util";
import { PGlite } from "@electric-sql/pglite";
import type { PgDatabase, PgQueryResultHKT } from "drizzle-orm/pg-core";
import { drizzle as drizzlePglite } from "drizzle-orm/pglite";
import { migrate as migratePglite } from "drizzle-orm/pglite/migrator";
import { drizzle as drizzlePostgres } from "drizzle-orm/postgres-js";
import { migrate as migratePostgres } from "drizzle-orm/postgres-js/migrator";
import postgres from "postgres";
import { dataDir, envNumber, envRaw } from "@/lib/config";
import { metrics } from "@/lib/metrics";
import { acquireEmbeddedLock, releaseEmbeddedLock } from "./embedded";
import { preparesStatements, preparingClient } from "./prepared";
import { guardTransactions } from "./transaction-guard";
import * as schema from "./schema";
import { processSingleton } from "@/lib/singleton";

/** The same drizzle API over either driver. */
export type Db = PgDatabase<PgQueryResultHKT, typeof schema>;
export type Tx = Parameters<Parameters<Db["transaction"]>[0]>[0];
/** A database handle or an open transaction: domain functions accept either. */
export type Queryable = Db | Tx;

/** The rows of a raw `execute(sql…)`: postgres.js answers an array of them, PGlite an object holding them. */
export const rowsOf = <T>(result: unknown): T[] => (Array.isArray(result) ? (result as T[]) : ((result as { rows?: T[] }).rows ?? []));

interface DbHandle {
  db: Db;
  embedded: boolean;
  /** LISTENs on `channel`: onListen each time the listening connection is (re)established, onNotify per NOTIFY. */
  listen(channel: string, onNotify: (payload: string) => void, onListen: () => void): Promise<void>;
  close(): Promise<void>;
}

/** Thrown when the embedded database is held by another live process (the running server). */
export class EmbeddedDatabaseBusy extends Error {}

const state = processSingleton("dbHandle", () => ({ handle: undefined as Promise<DbHandle> | undefined }));

const migrationsFolder = () => path.join(process.cwd(), "lib/db/migrations");
const MIGRATION_LOCK = 7_253_001;

/**
 * `db_statements_total` (npm run bench prints statements per landed intent): on PostgreSQL every statement drizzle
 * sends, prepared or not, inside transactions and savepoints too, with their BEGIN and COMMIT or ROLLBACK
 * (preparingClient counts them); not postgres.js's own few (a new connection's type lookup, LISTEN). Not through
 * postgres.js's `debug` hook, which would count those too but makes a failed query's parameters enumerable on its
 * error, and so printed in the log (a secret among them: CI's log check caught one).
 */
const countStatement = (n = 1) => metrics.dbStatements.inc(n);

async function openPostgres(url: string): Promise<DbHandle> {
  const sql = postgres(url, { max: envNumber("DATABASE_POOL_SIZE", 10, { above: 0, integer: true }), onnotice: () => {}, prepare: preparesStatements() });
  const db = drizzlePostgres(preparingClient(sql, preparesStatements(), countStatement), { schema, casing: "snake_case" });
  // Several instances may start at once against one PostgreSQL: one migrates, the others wait.
  const lockConn = await sql.reserve();
  try {
    await lockConn`select pg_advisory_lock(${MIGRATION_LOCK})`;
    await migratePostgres(db, { migrationsFolder: migrationsFolder() });
  } finally {
    await lockConn`select pg_advisory_unlock(${MIGRATION_LOCK})`.catch(() => {});
    lockConn.release();
  }
  return {
    db: guardTransactions(db) as unknown as Db,
    embedded: false,
    // postgres.js keeps one extra connection for all listeners and reconnects it by itself (onListen again).
    listen: async (channel, onNotify, onListen) => void (await sql.listen(channel, onNotify, onListen)),
    close: () => sql.end({ timeout: 5 }),
  };
}

/**
 * PGlite's statements for `db_statements_total`, counted where drizzle and the listener call it: `query` and `exec`
 * (one per call: a multi-statement `exec` is migrations' and LISTEN's), and a transaction as its BEGIN, its body's
 * `query`/`exec` calls and its COMMIT or ROLLBACK, which PGlite runs through private methods. The instance's own
 * methods are replaced (drizzle checks `instanceof PGlite`); a counter per call costs nothing measurable.
 */
function countStatements(client: PGlite): PGlite {
  const query = client.query.bind(client);
  const exec = client.exec.bind(client);
  const transaction = client.transaction.bind(client);
  client.query = ((...args: Parameters<PGlite["query"]>) => (countStatement(), query(...args))) as PGlite["query"];
  client.exec = (...args) => (countStatement(), exec(...args));
  client.transaction = (body) => {
    countStatement(); // BEGIN
    return transaction((tx) => {
      const txQuery = tx.query.bind(tx);
      const txExec = tx.exec.bind(tx);
      tx.query = ((...args: Parameters<typeof tx.query>) => (countStatement(), txQuery(...args))) as typeof tx.query;
      tx.exec = (...args) => (countStatement(), txExec(...args));
      return body(tx);
    }).finally(countStatement); // COMMIT, or ROLLBACK (an explicit tx.rollback() included)
  };
  return client;
}

/**
 * An in-memory database may start from a dumped, already migrated data directory
 * (`PGLITE_TEMPLATE`, written by the test setup): loading one takes ~1.5 s where a fresh
 * initdb takes ~4.5 s on these cores, and every test file opens its own database.
 */
function templateOptions() {
  const template = envRaw("PGLITE_TEMPLATE");
  return template ? { loadDataDir: new Blob([fs.readFileSync(template)]) } : undefined;
}

/**
 * PostgreSQL's 128 MB of shared buffers live in this process's memory with PGlite, which never
 * gives WebAssembly memory back: 16 MB holds an embedded installation's hot pages and keeps the
 * idle server about 100 MB smaller (`npm start`, idle: 519–553 → 419 MB RSS).
 */
const PGLITE_OPTIONS = { startParams: [...PGlite.defaultStartParams, "-c", "shared_buffers=16MB"] };

/**
 * Opens an embedded data directory. A new one is created and migrated first, by a child process
 * (scripts/pglite-init.mjs): initdb and the first migration leave PGlite's memory hundreds of MB
 * larger for the life of the process than opening a migrated directory does (`npm start`'s first
 * run, idle: 405 → ~280 MB RSS, as on every later start).
 */
async function openPgliteDir(dir: string): Promise<PGlite> {
  if (!fs.existsSync(path.join(dir, "PG_VERSION"))) {
    const script = path.join(/* turbopackIgnore: true */ process.cwd(), "scripts/pglite-init.mjs");
    await promisify(execFile)(process.execPath, [script, dir, migrationsFolder(), JSON.stringify(PGLITE_OPTIONS.startParams)]);
  }
  return PGlite.create(dir, PGLITE_OPTIONS);
}

/**
 * Embedded PGlite, in this process: persisted under `.data/pglite`, or in memory when
 * `PGLITE_DATA_DIR=memory://` (tests). PGlite serializes transactions itself.
 */
async function openPglite(): Promise<DbHandle> {
  const configured = envRaw("PGLITE_DATA_DIR");
  const inMemory = configured?.startsWith("memory://") ?? false;
  const root = dataDir();
  if (!inMemory) {
    const lock = acquireEmbeddedLock(root);
    if (!lock.acquired) throw new EmbeddedDatabaseBusy(`The embedded database is in use by process ${lock.owner.pid}.`);
  }
  try {
    const client = countStatements(inMemory ? await PGlite.create({ ...templateOptions(), ...PGLITE_OPTIONS }) : await openPgliteDir(configured ?? path.join(root, "pglite")));
    const db = drizzlePglite(client, { schema, casing: "snake_case" });
    await migratePglite(db, { migrationsFolder: migrationsFolder() });
    return {
      db: guardTransactions(db) as unknown as Db,
      embedded: true,
      async listen(channel, onNotify, onListen) {
        await client.listen(channel, onNotify);
        onListen();
      },
      async close() {
        await client.close();
        if (!inMemory) releaseEmbeddedLock(root);
      },
    };
  } catch (err) {
    if (!inMemory) releaseEmbeddedLock(root);
    throw err;
  }
}

const openDatabase = (url = envRaw("DATABASE_URL")) => (url ? openPostgres(url) : openPglite());

export function getDbHandle(): Promise<DbHandle> {
  state.handle ??= openDatabase().catch((err) => {
    state.handle = undefined;
    throw err;
  });
  return state.handle;
}

export async function getDb(): Promise<Db> {
  return (await getDbHandle()).db;
}

export async function closeDb(): Promise<void> {
  const handle = state.handle;
  state.handle = undefined;
  if (handle) await (await handle).close();
}
