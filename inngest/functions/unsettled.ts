import { and, inArray, sql } from "drizzle-orm";
import { getDb, type Db } from "@/lib/db/client";
import { functionRuns } from "@/lib/db/schema";
import { unsettledIntents } from "@/lib/intents/land-intent";
import { fanOutStragglers } from "@/lib/deliveries/publish";
import { inngest } from "../client";
import { expiryJob, relayAloneJobId, relayJob, relayJobId, type Job } from "@/lib/jobs/messages";
import { sendJobs } from "@/lib/jobs/port";
import { relayIntent, relayIntents } from "./relay";

/** Relay runs started again for an intent whose run ended while it was still pending (a run from before a fix, say). */
const RELAY_RESTARTS = 3;

const restartIds = (intentId: string) => Array.from({ length: RELAY_RESTARTS }, (_, i) => `${relayJobId(intentId)}:${i + 1}`);

/**
 * The relay event each pending intent needs: its first one when it has no run (a lost event; sent again with its
 * first id, so a run that exists is not run twice), none while a run is waiting, queued or running (a batched event
 * counts by its batch's run; an intent relayed alone, by that run too), and a new one when every run it had ended
 * with it still pending (an intent must not stay pending for ever), up to RELAY_RESTARTS times.
 * Runs are seen only with the embedded runner; with an Inngest server every intent gets its first event again.
 */
async function relayJobs(db: Db, intents: { id: string; projectId: string }[]): Promise<Job[]> {
  if (intents.length === 0) return [];
  const eventIds = intents.flatMap(({ id }) => [relayJobId(id), ...restartIds(id)].flatMap((first) => [first, relayAloneJobId(first)]));
  const runs = await db
    .select({ eventId: functionRuns.eventId, status: functionRuns.status, batch: sql<string | null>`${functionRuns.output}->>'batch'` })
    .from(functionRuns)
    .where(and(inArray(functionRuns.functionId, [relayIntents.id(inngest.id), relayIntent.id(inngest.id)]), inArray(functionRuns.eventId, eventIds)));
  const batchIds = [...new Set(runs.flatMap((run) => (run.batch ? [run.batch] : [])))];
  const batches = batchIds.length ? await db.select({ id: functionRuns.id, status: functionRuns.status }).from(functionRuns).where(inArray(functionRuns.id, batchIds)) : [];
  const batchStatus = new Map(batches.map((b) => [b.id, b.status]));
  const live = (status: string | undefined) => status === "batched" || status === "queued" || status === "running";
  return intents.flatMap(({ id, projectId }) => {
    const first = relayJobId(id);
    const mine = runs.filter((run) => run.eventId === first || run.eventId.startsWith(`${first}:`));
    if (mine.length === 0) return [relayJob(id, projectId)];
    const ofIntent = [...mine, ...runs.filter((run) => run.eventId.startsWith(relayAloneJobId(first)))];
    if (ofIntent.some((run) => live(run.status) || (run.batch !== null && live(batchStatus.get(run.batch))))) return [];
    const next = restartIds(id)[mine.length - 1];
    return next ? [{ ...relayJob(id, projectId), id: next }] : [];
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
      const relays = await relayJobs(db, intents.filter((i) => i.status === "pending"));
      const expiries = intents.filter((i) => i.status !== "pending").map((i) => expiryJob(i.id, i.projectId));
      if (relays.length || expiries.length) await sendJobs([...relays, ...expiries]);
      const events = await fanOutStragglers(db);
      return { intents: intents.length, events };
    }),
);
