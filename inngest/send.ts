import { envNumber } from "@/lib/config";
import { getDbHandle } from "@/lib/db/client";
import { usesInngestServer } from "./client";
import { functions } from "./functions";
import type { ServiceEvent } from "./events";
import { sendEvents as send, startEmbeddedRunner, type RunnerOptions } from "./runner";

/**
 * RUNNER_LEASE_MS: how soon another instance takes over the runs of one that died.
 * RUNNER_CONCURRENCY: runs executing at once; a relay run mostly waits on the chain, so many fit.
 */
function optionsFromEnv(): RunnerOptions {
  const leaseMs = envNumber("RUNNER_LEASE_MS", undefined, { above: 0 });
  const concurrency = envNumber("RUNNER_CONCURRENCY", undefined, { above: 0 });
  return { ...(leaseMs ? { leaseMs } : {}), concurrency: concurrency ? Math.floor(concurrency) : 64 };
}

/** Starts this process's embedded runner (no-op with an Inngest server, or when already running). */
export async function ensureRunner(options?: RunnerOptions) {
  if (usesInngestServer()) return null;
  const { db, embedded } = await getDbHandle();
  return startEmbeddedRunner(db, functions, { exclusive: embedded, ...optionsFromEnv(), ...options });
}

/** Sends service events, starting the embedded runner on first use. */
export async function sendEvents(events: ServiceEvent[]) {
  await ensureRunner();
  await send(events);
}
