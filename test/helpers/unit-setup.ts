import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll } from "vitest";

/**
 * The unit project (`*.unit.test.ts`, vitest.config.ts) has no global setup: no chain, no database.
 * A unit test that reaches for one by mistake fails at once, on a connection refused, rather than
 * opening a PGlite or finding the developer's own anvil on 8545; and state it writes (the embedded
 * master key, say) goes to a temporary directory of the test file's, never to `.data/`.
 */
const refused = "127.0.0.1:1";
process.env.DATABASE_URL = `postgres://unit-tests-have-no-database@${refused}/none`;
process.env.LOCAL_CHAINS = "31337,31338,31339:live";
for (const chainId of [31337, 31338, 31339]) process.env[`CHAIN_${chainId}_RPC_URL`] = `http://${refused}`;

const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "wallet-unit-"));
process.env.DATA_DIR = dataDir;
afterAll(() => fs.rmSync(dataDir, { recursive: true, force: true }));
