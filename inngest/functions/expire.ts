import { getDb } from "@/lib/db/client";
import { cancelUnsigned } from "@/lib/intents/relay";
import { SPONSORSHIP_SECONDS } from "@/lib/intents/service";
import { inngest } from "../client";
import { notifyIntent } from "./webhooks";

export const EXPIRE_EVENT = "transaction_intent/expire";

/** The cancellation's event for an intent awaiting its signature: its id makes a second send a no-op. */
export const expireEvent = (intentId: string) => ({ name: EXPIRE_EVENT, data: { intentId }, id: `expire:${intentId}` });

/**
 * A sponsored intent awaiting its owner's signature is cancelled (and the webhook told) once its
 * paymaster signature has run out: signed later, it could no longer land.
 */
export const cancelUnsignedIntent = inngest.createFunction(
  { id: "cancel-unsigned-intent", retries: 10, triggers: [{ event: EXPIRE_EVENT }] },
  async ({ event, step }) => {
    const intentId = event.data.intentId as string;
    await step.sleep("wait-for-signature", `${SPONSORSHIP_SECONDS}s`);
    const cancelled = await step.run("cancel", async () => cancelUnsigned(await getDb(), intentId));
    if (cancelled) await step.run("notify-cancelled", () => notifyIntent(intentId, "transaction_intent.cancelled"));
    return { intentId, cancelled };
  },
);
