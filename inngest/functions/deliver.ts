import { getDb } from "@/lib/db/client";
import { attemptDelivery } from "@/lib/deliveries/attempt";
import { retrySchedule } from "@/lib/deliveries/schedule";
import { inngest } from "../client";
import { deliveryRequested } from "@/lib/jobs/messages";

/**
 * Delivers one published event to one target: an attempt now, then one after each wait of the
 * retry schedule (lib/deliveries/schedule.ts: about three days) until the receiver answers 2xx,
 * the target is gone or disabled, or the schedule ends. Each attempt is a step, logged before the
 * next starts, so a crash repeats at most the attempt in flight (receivers deduplicate by
 * `webhook-id`, which is the same on every attempt).
 */
export const deliverEvent = inngest.createFunction(
  { id: "deliver-event", retries: 10, triggers: [deliveryRequested] },
  async ({ event, step }) => {
    const { messageId, target } = event.data;
    const schedule = retrySchedule();
    for (let i = 0; ; i++) {
      const result = await step.run(`attempt-${i + 1}`, async () => attemptDelivery(await getDb(), { messageId, target, attempt: i + 1, reason: "scheduled" }));
      if (result.outcome !== "failed" || result.disabled || i >= schedule.length) return { messageId, target, attempts: i + 1, outcome: result.outcome, disabled: result.disabled ?? false };
      await step.sleep(`retry-${i + 1}`, schedule[i]!);
    }
  },
);
