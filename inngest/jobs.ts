import { envNumber } from "@/lib/config";
import { getDbHandle } from "@/lib/db/client";
import { registerJobBackend, type JobBackend } from "@/lib/jobs/port";
import type { Job } from "@/lib/jobs/messages";
import { inngest, usesInngestServer } from "./client";
import { embeddedRunner, startEmbeddedRunner, type RunnerOptions } from "./runner";

/**
 * RUNNER_LEASE_MS: how soon another instance takes over the runs of one that died.
 * RUNNER_CONCURRENCY: runs executing at once; a relay run mostly waits on the chain, so many fit.
 */
function optionsFromEnv(): RunnerOptions {
  const leaseMs = envNumber("RUNNER_LEASE_MS", undefined, { above: 0 });
  const concurrency = envNumber("RUNNER_CONCURRENCY", undefined, { above: 0 });
  return { ...(leaseMs ? { leaseMs } : {}), concurrency: concurrency ? Math.floor(concurrency) : 64 };
}

/**
 * Starts this process's embedded runner (no-op with an Inngest server, or when already running). The function list
 * is loaded only then: registering the backend does not load every function (and the lib/ modules they import).
 */
export async function ensureRunner(options?: RunnerOptions) {
  if (usesInngestServer()) return null;
  const [{ db, embedded }, { functions }] = await Promise.all([getDbHandle(), import("./functions")]);
  return startEmbeddedRunner(db, functions, { exclusive: embedded, ...optionsFromEnv(), ...options });
}

/** Sends jobs: to Inngest when it is configured, else to the embedded runner, started on first use. */
export async function sendJobs(jobs: Job[]): Promise<void> {
  if (usesInngestServer()) {
    await inngest.send(jobs.map((job) => ({ name: job.name, data: job.data, id: job.id })));
    return;
  }
  // Once started, the runner is at hand: no database handle or function list to look up again on every send.
  const runner = embeddedRunner() ?? (await ensureRunner());
  if (!runner) throw new Error("the embedded runner is not started");
  await runner.send(jobs);
}

/** Inngest's client or the embedded runner, chosen at each call by the INNGEST_* settings (as they are read). */
export const jobs: JobBackend = {
  send: sendJobs,
  start: () => ensureRunner(),
  health: () => (usesInngestServer() ? { ok: true, mode: "inngest" } : { mode: "embedded", ...(embeddedRunner()?.health() ?? { ok: false, error: "not started" }) }),
};

/** The composition root's part (instrumentation.ts, test/jobs-setup.ts): lib/'s jobs go here from now on. */
export function registerJobs() {
  registerJobBackend(jobs);
}
