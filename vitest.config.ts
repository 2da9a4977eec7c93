import path from "node:path";
import { defineConfig } from "vitest/config";

const alias = { "@": path.resolve(import.meta.dirname) };
const roots = ["test", "lib", "contracts", "inngest"];
const UNIT = roots.map((root) => `${root}/**/*.unit.test.ts`);
/**
 * Integration tests that need chains but no database: the contracts' and the chain layer's (nothing of lib/db).
 * `TESTS_NEEDING_A_DATABASE_ONLY=1` leaves them out, with the unit project: how .ci/run's second run of the suite (on
 * the other database) skips what the first already ran against the same chains.
 */
const NO_DATABASE = ["contracts/test/**", "lib/chain/**"];
const databaseOnly = process.env.TESTS_NEEDING_A_DATABASE_ONLY === "1";

/**
 * Two projects, both run by `npm test`:
 * - `unit`: `*.unit.test.ts`, tests that need neither a chain nor a database. No global setup, so
 *   `npx vitest run --project unit` (or one such file) starts in a second; test/helpers/unit-setup.ts makes a
 *   database or chain reached by mistake fail fast instead of being started or found.
 * - `integration`: every other test, after test/helpers/global-setup.ts has started three anvil chains with
 *   our contracts and a database (PGlite template, or a fresh PostgreSQL database with DATABASE_URL).
 * The global setup sits on the integration project only: Vitest runs a project's global setup only
 * when that project has a test queued, but always runs the root config's.
 */
export default defineConfig({
  resolve: { alias },
  test: {
    environment: "node",
    testTimeout: 30_000,
    projects: [
      {
        resolve: { alias },
        test: {
          name: "unit",
          include: databaseOnly ? [] : UNIT,
          setupFiles: ["test/helpers/worker-setup.ts", "test/helpers/unit-setup.ts"],
          environment: "node",
          testTimeout: 30_000,
        },
      },
      {
        resolve: { alias },
        test: {
          name: "integration",
          include: roots.map((root) => `${root}/**/*.test.ts`),
          exclude: [...UNIT, "**/node_modules/**", ...(databaseOnly ? NO_DATABASE : [])],
          globalSetup: ["test/helpers/global-setup.ts"],
          setupFiles: ["test/helpers/worker-setup.ts", "test/helpers/jobs-setup.ts"],
          environment: "node",
          testTimeout: 30_000,
          hookTimeout: 300_000,
        },
      },
    ],
  },
});
