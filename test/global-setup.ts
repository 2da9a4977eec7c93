import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { createFreshDatabase } from "./fresh-database";

/**
 * Without DATABASE_URL every test process gets an in-memory PGlite. With it, the run gets a
 * fresh database of its own on that server, dropped afterwards. Either way state goes to a
 * temporary DATA_DIR, never to the developer's `.data/`.
 */
export default async function setup() {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "wallet-test-"));
  process.env.DATA_DIR = dataDir;
  process.env.PGLITE_DATA_DIR = "memory://";
  let dropDatabase = async () => {};
  if (process.env.DATABASE_URL) {
    const database = await createFreshDatabase(process.env.DATABASE_URL, "test");
    process.env.DATABASE_URL = database.url;
    dropDatabase = database.drop;
  }
  return async () => {
    await dropDatabase();
    fs.rmSync(dataDir, { recursive: true, force: true });
  };
}
