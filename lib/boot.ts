import { enableLocalAdmin } from "@/lib/admin";
import path from "node:path";
import { dataDir, listenHost, envRaw } from "@/lib/config";
import { prepareChains } from "@/lib/prepare-chains";
import { stopLocalChains } from "@/lib/chain/local";
import { closeDb, getDbHandle } from "@/lib/db/client";
import { fanOutStragglers } from "@/lib/deliveries/publish";
import { startJobRunner } from "@/lib/jobs/port";
import { flushRequestLog } from "@/lib/http/request-log";
import { log } from "@/lib/log";
import { onShutdown } from "@/lib/shutdown";
import { ensureDefaultProject } from "@/lib/projects/default-project";
import { createdProjectLines } from "@/lib/projects/banner";
import { claimUrl } from "@/lib/projects/claims";
import { signUpClosed } from "@/lib/developers/service";
import { resealLegacySecretKeys } from "@/lib/projects/sealed-keys";
import { processSingleton } from "@/lib/singleton";

const state = processSingleton("booted", () => ({ started: undefined as Promise<void> | undefined }));

/** Runs once per server process: database (and migrations), local chains and our contracts, then the first-start project. */
export function boot(): Promise<void> {
  state.started ??= start();
  return state.started;
}

async function start() {
  const { db, embedded } = await getDbHandle();
  const host = listenHost();
  const port = envRaw("PORT") ?? "3000";
  const base = `http://${host}:${port}`;
  if (embedded) enableLocalAdmin(host, port);
  const [result, chainLines] = await Promise.all([ensureDefaultProject(db), prepareChains()]);
  // Resumes any run a previous process left unfinished (the relay of intents, among others).
  const runner = await startJobRunner();
  // Events a killed predecessor published but never fanned out: at once, not at the minute sweep's 30 s bound
  // (fanning one out twice re-sends the same event ids, which the runner ignores).
  fanOutStragglers(db, 0).catch((err: unknown) => log.error({ err }, "fanning out unsent events at start failed"));
  // Secret keys sealed before they were bound to their mode and key id (migration 0028): resealed bound once.
  resealLegacySecretKeys(db)
    .then((resealed) => resealed && log.info({ resealed }, "secret keys resealed bound to their mode and key id"))
    .catch((err: unknown) => log.error({ err }, "resealing secret keys at start failed"));
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
    lines.push(`  Claim it in the dashboard (a one-time link, shown only now; lost: npm run cli -- project claim-link):`, `    ${claimUrl(envRaw("NEXTAUTH_URL") ?? base, result.claimToken)}`);
  }
  // Closed by default (issue 29.14): say so where the operator looks, with the way to open it.
  if (signUpClosed()) lines.push(`  Dashboard sign-up is by invitation (and the claim link); SIGNUP=open lets anyone sign up.`);
  lines.push(...chainLines);
  // The banner is for the person who ran `npm start`: plain text, not a log line.
  process.stdout.write(lines.join("\n") + "\n\n");

  // After the HTTP server drained (lib/shutdown.ts): runs finish or are handed over, then the rest closes.
  onShutdown("runner", async (graceMs) => {
    const handedOver = (await runner?.stop(graceMs)) ?? 0;
    if (handedOver) log.warn({ runs: handedOver }, "shutting down: runs still executing were handed over (leases released)");
  });
  onShutdown("request log", () => flushRequestLog());
  onShutdown("local chains", () => stopLocalChains());
  onShutdown("database", () => closeDb());
}
