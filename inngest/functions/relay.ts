import { getDb } from "@/lib/db/client";
import { abandonIntent, checkConfirmations, landIntent, type ConfirmationCheck, type LandingOutcome } from "@/lib/intents/land-intent";
import { checkBatchConfirmations, intentsOf, landIntents, type BatchOutcome } from "@/lib/intents/land-batch";
import { publishIntentEvent, publishIntentEvents, type IntentTopicOf } from "@/lib/deliveries/publish";
import { inngest } from "../client";
import { relayAloneJob, relayAloneRequested, relayRequested } from "@/lib/jobs/messages";
import { sendJobs } from "@/lib/jobs/port";

const notify = async (intentId: string, topic: IntentTopicOf) => Boolean(await publishIntentEvent(await getDb(), intentId, topic));

const notifyAll = async (ids: string[], topic: IntentTopicOf) => {
  const db = await getDb();
  return publishIntentEvents(db, await intentsOf(db, ids), topic);
};

const confirmedTopic: IntentTopicOf = (intent) => (intent.status === "successful" ? "transaction_intent.successful" : "transaction_intent.failed");

/** Intents per batch: as many as a bundle holds (the relayer splits one that is too large for a block). */
const BATCH_SIZE = 50;

/**
 * Lands a batch of pending intents' ops (up to BATCH_SIZE, gathered while the previous batch lands, or for at most a
 * second with an Inngest server), then waits for their confirmation blocks: a handful of stored steps for the whole
 * bundle instead of as many per intent. Landing looks for the ops on chain first, so a crash or retry never sends an
 * operation twice. An intent whose op does not land this way goes on alone (relayIntent below); one whose landing
 * cannot be recorded after every retry too.
 */
export const relayIntents = inngest.createFunction(
  { id: "relay-transaction-intents", retries: 10, triggers: [relayRequested], batchEvents: { maxSize: BATCH_SIZE, timeout: "1s" } },
  async ({ events, step }) => {
    // The event each intent came with (a restart's has an id of its own, and so has the relay alone it may need).
    const eventOf = new Map(events.map((event) => [event.data.intentId, event]));
    const ids = [...eventOf.keys()];
    let outcomes: Record<string, BatchOutcome>;
    try {
      outcomes = await step.run("land", async () => landIntents(await getDb(), ids));
    } catch {
      // The step's retries are spent (the database, not an op): each intent's own relay looks for its op and decides.
      outcomes = Object.fromEntries(ids.map((id) => [id, "alone" as const]));
    }
    const having = (outcome: BatchOutcome) => ids.filter((id) => outcomes[id] === outcome);
    const alone = having("alone");
    if (alone.length) await step.run("relay-alone", () => sendJobs(alone.map((id) => eventOf.get(id)!).map((event) => relayAloneJob(event.data.intentId, event.data.projectId, event.id))));
    if (having("rejected").length) await step.run("notify-failed", () => notifyAll(having("rejected"), "transaction_intent.failed"));
    let waiting = having("landed");
    if (waiting.length) await step.run("notify-broadcast", () => notifyAll(waiting, "transaction_intent.broadcast"));
    for (let check = 0; waiting.length > 0; check++) {
      const ask = waiting;
      const checked = await step.run(`confirmations-${check}`, async () => checkBatchConfirmations(await getDb(), ask));
      // The confirmation webhook: after confirmationBlocks blocks, successful or failed by the op's status.
      if (checked.confirmed.length) await step.run(`notify-confirmed-${check}`, () => notifyAll(checked.confirmed, confirmedTopic));
      // Reorged away (checked.reorged): sent back and relayed again by a job of their own, not by this run.
      waiting = checked.waiting;
      if (waiting.length === 0) break;
      // As long as the missing blocks should take (1 to 30 s), growing after many checks so a stalled chain stays within a run's step limit.
      await step.sleep(`wait-for-blocks-${check}`, `${Math.min(30, Math.max(checked.waitSeconds, 2 ** Math.floor(check / 5)))}s`);
    }
    return { intents: ids.length, landed: having("landed").length, alone: alone.length };
  },
);

/** Rebuilds of a custodial intent's op after rejections, and land attempts in all (held ones wait between). */
const MAX_REBUILDS = 3;
const MAX_ROUNDS = 200;

/**
 * Lands one pending intent's user operation, then waits for its confirmation blocks: for an intent whose op did not
 * land in its batch (held for its account's deployment, rebuilt after a rejection, its chain's node failing). Each
 * step's outcome is stored before the next, and landing first looks for the op on chain, so a crash or retry never
 * sends an operation twice.
 */
export const relayIntent = inngest.createFunction(
  { id: "relay-transaction-intent", retries: 10, triggers: [relayAloneRequested] },
  async ({ event, step }) => {
    const { intentId } = event.data;
    let outcome: LandingOutcome = "not-pending";
    let retries = 0;
    for (let round = 0; round < MAX_ROUNDS; round++) {
      const suffix = round === 0 ? "" : `-${round}`;
      try {
        outcome = await step.run(`land${suffix}`, async () => landIntent(await getDb(), intentId, { rebuild: retries < MAX_REBUILDS }));
      } catch (err) {
        // The step's retries are spent on errors that are not the op's (node, bundle): the intent must not stay pending.
        outcome = await step.run(`give-up${suffix}`, async () => abandonIntent(await getDb(), intentId, err instanceof Error ? err.message : String(err)));
      }
      if (outcome === "retry") {
        retries++;
        continue;
      }
      if (outcome !== "held") break;
      // Waiting for the account's deployment by another intent: 1 s between the first looks, then longer, up to 30 s.
      await step.sleep(`held${suffix}`, `${Math.min(30, 2 ** Math.floor(round / 10))}s`);
    }
    if (outcome === "held" || outcome === "retry") {
      outcome = await step.run("give-up", async () => abandonIntent(await getDb(), intentId, "its account was never deployed"));
    }
    if (outcome === "not-pending") return { intentId, outcome };
    if (outcome === "rejected") {
      await step.run("notify-failed", () => notify(intentId, "transaction_intent.failed"));
      return { intentId, outcome };
    }
    await step.run("notify-broadcast", () => notify(intentId, "transaction_intent.broadcast"));
    for (let check = 0; ; check++) {
      // A boolean is what an earlier version stored for a check (true: confirmed).
      const checked = (await step.run(`confirmations-${check}`, async () => checkConfirmations(await getDb(), intentId))) as ConfirmationCheck | boolean;
      // Its landing left the chain: it was sent back, and a job of its own relays it again.
      if (typeof checked === "object" && checked.reorged) return { intentId, outcome, reorged: true };
      if (checked === true || (typeof checked === "object" && checked.remaining <= 0)) break;
      // As long as the missing blocks should take (1 to 30 s), growing after many checks so a stalled chain stays within a run's step limit.
      const seconds = typeof checked === "object" ? checked.waitSeconds : 1;
      await step.sleep(`wait-for-blocks-${check}`, `${Math.min(30, Math.max(seconds, 2 ** Math.floor(check / 5)))}s`);
    }
    // The confirmation webhook: after confirmationBlocks blocks, successful or failed by the op's status.
    await step.run("notify-confirmed", () => notify(intentId, confirmedTopic));
    return { intentId, outcome, confirmed: true };
  },
);
