import { and, eq, inArray, notInArray } from "drizzle-orm";
import { inngest } from "@/inngest/client";
import { deliverEvent } from "@/inngest/functions/deliver";
import { getDb } from "@/lib/db/client";
import { functionRuns, subscriptions, triggers, webhookDeliveries } from "@/lib/db/schema";
import { newSigningSecret, sealSigningSecret } from "@/lib/deliveries/signing";
import type { Topic } from "@/lib/deliveries/topics";
import { newId } from "@/lib/ids";

/**
 * A subscription on `topic` with one webhook trigger to `url`, written as the subscriptions API
 * stores them (its secret sealed to the trigger): the delivery tests need targets, not that API.
 */
export async function subscribe(ctx: { projectId: string; livemode: boolean }, topic: Topic, url: string) {
  const db = await getDb();
  const subscriptionId = newId("subscription");
  const triggerId = newId("trigger");
  const secret = newSigningSecret();
  await db.insert(subscriptions).values({ id: subscriptionId, ...ctx, topic });
  await db.insert(triggers).values({ id: triggerId, ...ctx, subscriptionId, type: "webhook", target: url, encryptedSecret: sealSigningSecret(secret, triggerId) });
  return { subscriptionId, triggerId, secret };
}

export async function triggerRow(id: string) {
  const [row] = await (await getDb()).select().from(triggers).where(eq(triggers.id, id));
  if (!row) throw new Error(`no trigger ${id}`);
  return row;
}

/** The logged attempts to deliver one event (to one trigger), in order. */
export async function attemptsOf(messageId: string, triggerId?: string) {
  const rows = await (await getDb())
    .select()
    .from(webhookDeliveries)
    .where(and(eq(webhookDeliveries.messageId, messageId), triggerId ? eq(webhookDeliveries.triggerId, triggerId) : undefined));
  return rows.sort((a, b) => a.attempt - b.attempt || a.createdAt.getTime() - b.createdAt.getTime());
}

/** The delivery runs of these events to these targets that have not ended (queued, sleeping or executing). */
export async function unfinishedDeliveries(pairs: [messageId: string, target: string][]) {
  if (pairs.length === 0) return [];
  return (await getDb())
    .select({ id: functionRuns.id, eventId: functionRuns.eventId, status: functionRuns.status })
    .from(functionRuns)
    .where(
      and(
        eq(functionRuns.functionId, deliverEvent.id(inngest.id)),
        inArray(
          functionRuns.eventId,
          pairs.map(([m, t]) => `deliver:${m}:${t}`),
        ),
        notInArray(functionRuns.status, ["completed", "failed"]),
      ),
    );
}

/** The run delivering one event to one target. */
export async function deliveryRun(messageId: string, target: string) {
  const [row] = await (await getDb())
    .select()
    .from(functionRuns)
    .where(and(eq(functionRuns.functionId, deliverEvent.id(inngest.id)), eq(functionRuns.eventId, `deliver:${messageId}:${target}`)));
  return row;
}
