import { and, eq, inArray } from "drizzle-orm";
import { getDb, type Db } from "@/lib/db/client";
import { functionRuns } from "@/lib/db/schema";
import { unsettledIntents } from "@/lib/intents/relay";
import { fanOutStragglers } from "@/lib/deliveries/publish";
import { inngest } from "../client";
import { expireEvent, relayEvent, type ServiceEvent } from "../events";
import { sendEvents } from "../runner";
import { relayIntent } from "./relay";

/** Relay runs started again for an intent whose run ended while it was still pending (a run from before a fix, say). */
const RELAY_RESTARTS = 3;

const restartIds = (intentId: string) => Array.from({ length: RELAY_RESTARTS }, (_, i) => `${relayEvent(intentId).id}:${i + 1}`);

/**
 * The relay event each pending intent needs: its first one when it has no run (a lost event; sent again with its
 * first id, so a run that exists is not run twice), none while a run is queued or running, and a new one when every
 * run it had ended with it still pending (an intent must not stay pending for ever), up to RELAY_RESTARTS times.
 * Runs are seen only with the embedded runner; with an Inngest server every intent gets its first event again.
 */
async function relayEvents(db: Db, intentIds: string[]): Promise<ServiceEvent[]> {
  if (intentIds.length === 0) return [];
  const eventIds = intentIds.flatMap((id) => [relayEvent(id).id, ...restartIds(id)]);
  const runs = await db
    .select({ eventId: functionRuns.eventId, status: functionRuns.status })
    .from(functionRuns)
    .where(and(eq(functionRuns.functionId, relayIntent.id(inngest.id)), inArray(functionRuns.eventId, eventIds)));
  return intentIds.flatMap((id) => {
    const mine = runs.filter((run) => run.eventId === relayEvent(id).id || run.eventId.startsWith(`${relayEvent(id).id}:`));
    if (mine.length === 0) return [relayEvent(id)];
    if (mine.some((run) => run.status === "queued" || run.status === "running")) return [];
    const next = restartIds(id)[mine.length - 1];
    return next ? [{ ...relayEvent(id), id: next }] : [];
  });
}

/**
 * Every minute, sends again the event of each intent that has waited on its background run for a
 * while: a process that died after recording an intent but before sending its event, or whose send
 * failed after the commit (lib/http/after-commit.ts), leaves it with none. The event ids are the
 * ones first sent, so an intent whose run exists is not run twice. Published events whose fan-out
 * was lost the same way are fanned out.
 */
export const resendUnsettledIntents = inngest.createFunction(
  { id: "resend-unsettled-intents", retries: 2, triggers: [{ cron: "* * * * *" }] },
  async ({ step }) =>
    step.run("resend", async () => {
      const db = await getDb();
      const intents = await unsettledIntents(db);
      const relays = await relayEvents(db, intents.filter((i) => i.status === "pending").map((i) => i.id));
      const expiries = intents.filter((i) => i.status !== "pending").map((i) => expireEvent(i.id));
      if (relays.length || expiries.length) await sendEvents([...relays, ...expiries]);
      const events = await fanOutStragglers(db);
      return { intents: intents.length, events };
    }),
);
