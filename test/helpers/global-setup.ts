import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { startAnvil } from "@/lib/chain/anvil";
import { prepareChain } from "@/lib/prepare-chains";
import { findChain } from "@/lib/chain/registry";
import { createFreshDatabase } from "./fresh-database";
import { migratedTemplate } from "./pglite-template";
import { secretsInLogs } from "./secrets";

/**
 * Without DATABASE_URL every test process gets an in-memory PGlite. With it, the run gets a
 * fresh database of its own on that server, dropped afterwards. Either way state goes to a
 * temporary DATA_DIR, never to the developer's `.data/`. Fresh anvil chains get our contracts,
 * as `npm start` would give them: 31337 and 31338 for test keys, 31339 for live keys.
 */
export default async function setup() {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "wallet-test-"));
  process.env.DATA_DIR = dataDir;
  process.env.PGLITE_DATA_DIR = "memory://";
  const logDir = path.join(dataDir, "logs");
  fs.mkdirSync(logDir);
  process.env.TEST_LOG_DIR = logDir;
  let dropDatabase = async () => {};
  if (!process.env.DATABASE_URL) process.env.PGLITE_TEMPLATE = await migratedTemplate(dataDir);
  if (process.env.DATABASE_URL) {
    const database = await createFreshDatabase(process.env.DATABASE_URL, "test");
    process.env.DATABASE_URL = database.url;
    dropDatabase = database.drop;
  }
  const nodes = await Promise.all([31337, 31338, 31339].map((chainId) => startAnvil({ chainId, port: 0 })));
  process.env.LOCAL_CHAINS = "31337,31338,31339:live";
  for (const node of nodes) process.env[`CHAIN_${node.chainId}_RPC_URL`] = node.rpcUrl;
  await Promise.all(nodes.map((node) => prepareChain(findChain(node.chainId)!)));
  return async () => {
    // The logs of the whole run (test processes and the servers they started) never carry a secret the run handled.
    const scan = secretsInLogs(logDir);
    const whole = !process.argv.some((arg) => arg.endsWith(".test.ts")) && !process.argv.includes("-t");
    await Promise.all(nodes.map((node) => node.stop()));
    await dropDatabase();
    fs.rmSync(dataDir, { recursive: true, force: true });
    // Vitest reports a teardown's error but exits 0 for it: the exit code is set here.
    const fail = (message: string) => {
      console.error(message);
      process.exitCode = 1;
    };
    if (scan.leaks.length) return fail(`secrets in the logs of this run:\n  ${scan.leaks.join("\n  ")}`);
    // A full run that logged nothing or recorded no secret would pass the check above vacuously.
    if (whole && (scan.lines < 100 || scan.secrets < 20)) return fail(`the log check saw too little: ${scan.lines} log lines, ${scan.secrets} secrets`);
    console.log(`logs of the run: ${scan.lines} lines, none carrying any of the ${scan.secrets} secrets the tests handled`);
  };
}
