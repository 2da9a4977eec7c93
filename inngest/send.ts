import { getDbHandle } from "@/lib/db/client";
import { usesInngestServer } from "./client";
import { functions } from "./functions";
import { sendEvents as send, startEmbeddedRunner, type RunnerOptions, type ServiceEvent } from "./runner";

/** RUNNER_LEASE_MS: how soon another instance takes over the runs of one that died. */
function leaseFromEnv(): RunnerOptions {
  const leaseMs = Number(process.env.RUNNER_LEASE_MS);
  return process.env.RUNNER_LEASE_MS && Number.isFinite(leaseMs) && leaseMs > 0 ? { leaseMs } : {};
}

/** Starts this process's embedded runner (no-op with an Inngest server, or when already running). */
export async function ensureRunner(options?: RunnerOptions) {
  if (usesInngestServer()) return null;
  const { db, embedded } = await getDbHandle();
  return startEmbeddedRunner(db, functions, { exclusive: embedded, ...leaseFromEnv(), ...options });
}

/** Sends service events, starting the embedded runner on first use. */
export async function sendEvents(events: ServiceEvent[]) {
  await ensureRunner();
  await send(events);
}
