import { getDbHandle } from "@/lib/db/client";
import { usesInngestServer } from "./client";
import { functions } from "./functions";
import { sendEvents as send, startEmbeddedRunner, type RunnerOptions, type ServiceEvent } from "./runner";

/** Starts this process's embedded runner (no-op with an Inngest server, or when already running). */
export async function ensureRunner(options?: RunnerOptions) {
  if (usesInngestServer()) return null;
  const { db, embedded } = await getDbHandle();
  return startEmbeddedRunner(db, functions, { exclusive: embedded, ...options });
}

/** Sends service events, starting the embedded runner on first use. */
export async function sendEvents(events: ServiceEvent[]) {
  await ensureRunner();
  await send(events);
}
