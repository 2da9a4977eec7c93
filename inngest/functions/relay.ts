import { getDb } from "@/lib/db/client";
import { abandonIntent, checkConfirmations, landIntent, type ConfirmationCheck, type LandingOutcome } from "@/lib/intents/relay";
import { publishIntentEvent, type IntentTopicOf } from "@/lib/deliveries/publish";
import { inngest } from "../client";
import { relayRequested } from "../events";

const notify = async (intentId: string, topic: IntentTopicOf) => Boolean(await publishIntentEvent(await getDb(), intentId, topic));

/** Rebuilds of a custodial intent's op after rejections, and land attempts in all (held ones wait between). */
const MAX_REBUILDS = 3;
const MAX_ROUNDS = 200;

/**
 * Lands a pending intent's user operation, then waits for its confirmation blocks. Each step's
 * outcome is stored before the next, and landing first looks for the op on chain, so a crash or
 * retry never sends an operation twice.
 */
export const relayIntent = inngest.createFunction(
  { id: "relay-transaction-intent", retries: 10, triggers: [relayRequested] },
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
      if (checked === true || (typeof checked === "object" && checked.remaining <= 0)) break;
      // As long as the missing blocks should take (1 to 30 s), growing after many checks so a stalled chain stays within a run's step limit.
      const seconds = typeof checked === "object" ? checked.waitSeconds : 1;
      await step.sleep(`wait-for-blocks-${check}`, `${Math.min(30, Math.max(seconds, 2 ** Math.floor(check / 5)))}s`);
    }
    // The confirmation webhook: after confirmationBlocks blocks, successful or failed by the op's status.
    await step.run("notify-confirmed", () => notify(intentId, (intent) => (intent.status === "successful" ? "transaction_intent.successful" : "transaction_intent.failed")));
    return { intentId, outcome, confirmed: true };
  },
);
