import { getDb } from "@/lib/db/client";
import { cancelUnsigned } from "@/lib/intents/land-intent";
import { SPONSORSHIP_SECONDS } from "@/lib/intents/service";
import { publishIntentEvent } from "@/lib/deliveries/publish";
import { inngest } from "../client";
import { expiryScheduled } from "@/lib/jobs/messages";

/**
 * A sponsored intent awaiting its owner's signature is cancelled (and the webhook told) once its
 * paymaster signature has run out: signed later, it could no longer land.
 */
export const cancelUnsignedIntent = inngest.createFunction(
  { id: "cancel-unsigned-intent", retries: 10, triggers: [expiryScheduled] },
  async ({ event, step }) => {
    const { intentId } = event.data;
    await step.sleep("wait-for-signature", `${SPONSORSHIP_SECONDS}s`);
    const cancelled = await step.run("cancel", async () => cancelUnsigned(await getDb(), intentId));
    if (cancelled) await step.run("notify-cancelled", async () => Boolean(await publishIntentEvent(await getDb(), intentId, "transaction_intent.cancelled")));
    return { intentId, cancelled };
  },
);
