import crypto from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import postgres from "postgres";

/**
 * Without DATABASE_URL every test process gets an in-memory PGlite. With it, the run gets a
 * fresh database of its own on that server, dropped afterwards. Either way state goes to a
 * temporary DATA_DIR, never to the developer's `.data/`.
 */
export default async function setup() {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "wallet-test-"));
  process.env.DATA_DIR = dataDir;
  process.env.PGLITE_DATA_DIR = "memory://";
  const baseUrl = process.env.DATABASE_URL;
  let dropDatabase = async () => {};
  if (baseUrl) {
    const name = `test_${Date.now()}_${crypto.randomBytes(3).toString("hex")}`;
    const admin = postgres(baseUrl, { max: 1, onnotice: () => {} });
    await admin.unsafe(`create database "${name}"`);
    const url = new URL(baseUrl);
    url.pathname = `/${name}`;
    process.env.DATABASE_URL = url.toString();
    dropDatabase = async () => {
      await admin.unsafe(`drop database if exists "${name}" with (force)`);
      await admin.end();
    };
  }
  return async () => {
    await dropDatabase();
    fs.rmSync(dataDir, { recursive: true, force: true });
  };
}
