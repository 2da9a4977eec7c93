import { enableLocalAdmin } from "@/lib/admin";
import path from "node:path";
import { dataDir } from "@/lib/config";
import { prepareChains } from "@/lib/chain/prepare";
import { stopLocalChains } from "@/lib/chain/local";
import { closeDb, getDbHandle } from "@/lib/db/client";
import { ensureRunner } from "@/inngest/send";
import { fanOutStragglers } from "@/lib/deliveries/publish";
import { redact } from "@/lib/redact";
import { ensureDefaultProject } from "@/lib/projects/default-project";
import { createdProjectLines } from "@/lib/projects/banner";
import { claimUrl } from "@/lib/projects/claims";

const state = globalThis as unknown as { __booted?: Promise<void> };

/** Runs once per server process: database (and migrations), local chains and our contracts, then the first-start project. */
export function boot(): Promise<void> {
  state.__booted ??= start();
  return state.__booted;
}

async function start() {
  const { db, embedded } = await getDbHandle();
  const host = process.env.HOST ?? "127.0.0.1";
  const port = process.env.PORT ?? "3000";
  const base = `http://${host}:${port}`;
  if (embedded) enableLocalAdmin(host, port);
  const [result, chainLines] = await Promise.all([ensureDefaultProject(db), prepareChains()]);
  // Resumes any run a previous process left unfinished (the relay of intents, among others).
  const runner = await ensureRunner();
  // Events a killed predecessor published but never fanned out: at once, not at the minute sweep's 30 s bound
  // (fanning one out twice re-sends the same event ids, which the runner ignores).
  fanOutStragglers(db, 0).catch((err) => console.error(`Fanning out unsent events at start failed: ${redact((err as Error).message)}`));
  const shown = (file: string) => path.relative(process.cwd(), path.join(dataDir(), file)) || ".";
  const lines = [``, `  Smart-account wallet service — API at ${base}/v1 (OpenAPI: ${base}/v1/openapi.json)`];
  lines.push(`  Database: ${embedded ? `embedded PGlite in ${shown("pglite")}` : "PostgreSQL (DATABASE_URL)"}`);
  if (result?.created) {
    lines.push(...createdProjectLines(result.project, shown("default-project.json"), base));
  } else if (result) {
    lines.push(`  Project "${result.project.name}" (${result.project.id}); keys in ${shown("default-project.json")}`);
  } else {
    lines.push(`  Projects and keys: npm run cli -- project list`);
  }
  if (result?.claimToken) {
    lines.push(`  Claim it in the dashboard (a one-time link, shown only now; lost: npm run cli -- project claim-link):`, `    ${claimUrl(process.env.NEXTAUTH_URL ?? base, result.claimToken)}`);
  }
  lines.push(...chainLines);
  console.log(lines.join("\n") + "\n");

  for (const signal of ["SIGINT", "SIGTERM"] as const) {
    process.once(signal, () => {
      Promise.allSettled([runner?.stop(), stopLocalChains()])
        .then(() => closeDb())
        .finally(() => process.exit(0));
    });
  }
}
