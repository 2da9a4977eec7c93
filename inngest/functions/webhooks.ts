import { eq } from "drizzle-orm";
import { getDb } from "@/lib/db/client";
import { transactionIntents } from "@/lib/db/schema";
import { serializeIntent } from "@/lib/intents/serializer";
import { deliverEvent, webhookOf, type Topic } from "@/lib/webhooks/service";
import { inngest } from "../client";
import { sendEvents } from "../runner";

export const WEBHOOK_EVENT = "webhook/deliver";

/** Queues the intent's state change for the project webhook, if the project has one. */
export async function notifyIntent(intentId: string, topic: Topic) {
  const db = await getDb();
  const [intent] = await db.select().from(transactionIntents).where(eq(transactionIntents.id, intentId));
  if (!intent || !(await webhookOf(db, intent))) return false;
  await sendEvents([{ name: WEBHOOK_EVENT, data: { intentId, topic }, id: `webhook:${intentId}:${topic}` }]);
  return true;
}

/** POSTs `{type, date, data: <transactionIntent>}`, signed; a failed attempt is retried with backoff. */
export const deliverWebhook = inngest.createFunction(
  { id: "deliver-webhook", retries: 10, triggers: [{ event: WEBHOOK_EVENT }] },
  async ({ event, step, attempt }) => {
    const { intentId, topic } = event.data as { intentId: string; topic: Topic };
    return step.run("post", async () => {
      const db = await getDb();
      const [intent] = await db.select().from(transactionIntents).where(eq(transactionIntents.id, intentId));
      if (!intent) return { delivered: false };
      const delivered = await deliverEvent(db, intent, { topic, objectId: intent.id, data: serializeIntent(intent), attempt: attempt + 1 });
      return { delivered };
    });
  },
);
