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
import { dataDir } from "@/lib/config";
import { acquireEmbeddedLock, releaseEmbeddedLock } from "./embedded";
import { preparesStatements, preparingClient } from "./prepared";
import { guardTransactions } from "./transaction-guard";
import * as schema from "./schema";

/** The same drizzle API over either driver. */
export type Db = PgDatabase<PgQueryResultHKT, typeof schema>;
export type Tx = Parameters<Parameters<Db["transaction"]>[0]>[0];
/** A database handle or an open transaction: domain functions accept either. */
export type Queryable = Db | Tx;

interface DbHandle {
  db: Db;
  embedded: boolean;
  /** LISTENs on `channel`: onListen each time the listening connection is (re)established, onNotify per NOTIFY. */
  listen(channel: string, onNotify: (payload: string) => void, onListen: () => void): Promise<void>;
  close(): Promise<void>;
}

/** Thrown when the embedded database is held by another live process (the running server). */
export class EmbeddedDatabaseBusy extends Error {}

// Kept on globalThis: `next dev` may evaluate this module more than once.
const state = globalThis as unknown as { __dbHandle?: Promise<DbHandle> };

const migrationsFolder = () => path.join(process.cwd(), "lib/db/migrations");
const MIGRATION_LOCK = 7_253_001;

async function openPostgres(url: string): Promise<DbHandle> {
  const sql = postgres(url, { max: Number(process.env.DATABASE_POOL_SIZE ?? 30), onnotice: () => {}, prepare: preparesStatements() });
  const db = drizzlePostgres(preparingClient(sql), { schema, casing: "snake_case" });
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
 * An in-memory database may start from a dumped, already migrated data directory
 * (`PGLITE_TEMPLATE`, written by the test setup): loading one takes ~1.5 s where a fresh
 * initdb takes ~4.5 s on these cores, and every test file opens its own database.
 */
function templateOptions() {
  const template = process.env.PGLITE_TEMPLATE;
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
  const configured = process.env.PGLITE_DATA_DIR;
  const inMemory = configured?.startsWith("memory://") ?? false;
  const root = dataDir();
  if (!inMemory) {
    const lock = acquireEmbeddedLock(root);
    if (!lock.acquired) throw new EmbeddedDatabaseBusy(`The embedded database is in use by process ${lock.owner.pid}.`);
  }
  try {
    const client = inMemory ? await PGlite.create({ ...templateOptions(), ...PGLITE_OPTIONS }) : await openPgliteDir(configured ?? path.join(root, "pglite"));
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

export function getDbHandle(): Promise<DbHandle> {
  state.__dbHandle ??= (process.env.DATABASE_URL ? openPostgres(process.env.DATABASE_URL) : openPglite()).catch((err) => {
    state.__dbHandle = undefined;
    throw err;
  });
  return state.__dbHandle;
}

export async function getDb(): Promise<Db> {
  return (await getDbHandle()).db;
}

export async function closeDb(): Promise<void> {
  const handle = state.__dbHandle;
  state.__dbHandle = undefined;
  if (handle) await (await handle).close();
}
