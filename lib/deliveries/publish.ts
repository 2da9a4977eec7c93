import { and, asc, eq, inArray, isNull, lt, sql } from "drizzle-orm";
import { deliveryJob } from "@/lib/jobs/messages";
import { sendJobs } from "@/lib/jobs/port";
import { getDb, type Queryable } from "@/lib/db/client";
import { outboundEvents, subscriptions, transactionIntents, triggers, webhookSettings } from "@/lib/db/schema";
import { inScope } from "@/lib/db/scope";
import { afterCommit } from "@/lib/http/after-commit";
import { newId } from "@/lib/ids";
import { serializeIntent } from "@/lib/intent-records/serializer";
import type { ProjectContext } from "@/lib/tenant";
import { isIntentTopic, type IntentTopic, type Topic } from "./topics";

export interface Publication {
  topic: Topic;
  /** The object the event is about (tin_, eve_ …): the log's `object` filter. */
  objectId: string | null;
  data: unknown;
  /** The API request (req_) or monitor run (run_) that caused it. */
  requestId: string | null;
  /** The happening, once per project: publishing it again (a retried step) gives the same event. */
  dedupeKey: string;
}

/**
 * Records an event with its body fixed now, and returns its id (`msg_`, the `webhook-id` of every
 * attempt). Inside a transaction, call `fanOut` after the commit (`publishAfterCommit`).
 */
export async function publish(db: Queryable, ctx: ProjectContext, event: Publication): Promise<string> {
  return (await record(db, ctx, event, false)).id;
}

/** An event's row; its body, what every attempt delivers (`{type, date, data}`), fixed now. */
const eventRow = (ctx: ProjectContext, event: Publication, fannedOut: boolean) => ({
  id: newId("message"),
  projectId: ctx.projectId,
  livemode: ctx.livemode,
  topic: event.topic,
  objectId: event.objectId,
  requestId: event.requestId,
  body: JSON.stringify({ type: event.topic, date: Math.floor(Date.now() / 1000), data: event.data }),
  dedupeKey: event.dedupeKey,
  ...(fannedOut && { fannedOutAt: sql`now()` }),
});

/** The event's row, new (`inserted`), or the one an earlier publication of the same happening left. */
async function record(db: Queryable, ctx: ProjectContext, event: Publication, fannedOut: boolean): Promise<{ id: string; inserted: boolean }> {
  const [row] = await db.insert(outboundEvents).values(eventRow(ctx, event, fannedOut)).onConflictDoNothing().returning({ id: outboundEvents.id });
  if (row) return { id: row.id, inserted: true };
  const [existing] = await db
    .select({ id: outboundEvents.id })
    .from(outboundEvents)
    .where(and(eq(outboundEvents.projectId, ctx.projectId), eq(outboundEvents.dedupeKey, event.dedupeKey)));
  return { id: existing!.id, inserted: false };
}

/**
 * Records an event and hands it to its targets at once (outside a transaction): the targets are
 * looked up first, so an event with none is recorded as fanned out and one with some is sent and
 * then marked, three or four statements where recording and fanning out apart take six. A crash
 * before the mark leaves it to `fanOutStragglers`; a repeated publication fans out what is left.
 */
async function publishNow(db: Queryable, ctx: ProjectContext, event: Publication): Promise<string> {
  const targets = await deliveryTargets(db, ctx, event.topic);
  const { id, inserted } = await record(db, ctx, event, targets.length === 0);
  if (!inserted) await fanOut(db, id);
  else if (targets.length) await sendToTargets(db, id, ctx.projectId, targets);
  return id;
}

/**
 * Publishes a `test` event that its caller attempts itself, at once, to the targets it chose: it
 * is recorded as fanned out already, so the minute sweep does not also send it to every trigger
 * subscribed to `test`.
 */
export async function publishTest(db: Queryable, ctx: ProjectContext, message: string, requestId: string | null): Promise<string> {
  const id = newId("message");
  return (await record(db, ctx, { topic: "test", objectId: id, data: { id, object: "event", message }, requestId, dedupeKey: `test:${id}` }, true)).id;
}

/**
 * Where a topic's events go in a mode: the project webhook ("webhook") for intent topics, and each
 * live trigger subscribed to it. Given the event (`msg_`), only triggers created by the time it was
 * published: a fan-out redone later by the sweep must not hand an old event to a trigger added since.
 * (Compared in SQL: the timestamps have microseconds, a JS Date only milliseconds.) With `oldest`, a topic without
 * the project webhook goes to its oldest triggers only, that many at most.
 */
export async function deliveryTargets(db: Queryable, ctx: ProjectContext, topic: string, messageId?: string, oldest?: number): Promise<string[]> {
  const subscribed = db
    .select({ target: triggers.id })
    .from(triggers)
    .innerJoin(subscriptions, eq(subscriptions.id, triggers.subscriptionId))
    .where(
      inScope(
        subscriptions,
        ctx,
        eq(subscriptions.topic, topic),
        isNull(subscriptions.deletedAt),
        isNull(triggers.deletedAt),
        isNull(triggers.disabledAt),
        messageId ? sql`${triggers.createdAt} <= (select ${outboundEvents.createdAt} from ${outboundEvents} where ${outboundEvents.id} = ${messageId})` : undefined,
      ),
    );
  if (!isIntentTopic(topic)) {
    const rows = oldest === undefined ? await subscribed : await subscribed.orderBy(asc(triggers.createdAt), asc(triggers.id)).limit(oldest);
    return rows.map((r) => r.target);
  }
  // The project webhook and the triggers in one statement; the webhook first.
  const rows = await db
    .select({ target: sql<string>`'webhook'` })
    .from(webhookSettings)
    .where(inScope(webhookSettings, ctx))
    .unionAll(subscribed);
  return rows.map((r) => r.target).sort((x, y) => Number(y === "webhook") - Number(x === "webhook"));
}

/**
 * Sends one delivery event per target of a published event, once: the targets are those at the
 * time it happened (a trigger added later does not get old events). The delivery events' ids make
 * a repeated fan-out (a crash before it was marked) start nothing twice.
 */
export async function fanOut(db: Queryable, messageId: string): Promise<number> {
  const [message] = await db.select().from(outboundEvents).where(eq(outboundEvents.id, messageId));
  if (!message || message.fannedOutAt) return 0;
  const ctx = { projectId: message.projectId, livemode: message.livemode };
  const targets = await deliveryTargets(db, ctx, message.topic, message.id);
  await sendToTargets(db, message.id, message.projectId, targets);
  return targets.length;
}

/** One delivery event per target, then the event marked fanned out. */
async function sendToTargets(db: Queryable, messageId: string, projectId: string, targets: string[]) {
  if (targets.length) await sendJobs(targets.map((target) => deliveryJob(messageId, target, projectId)));
  await db.update(outboundEvents).set({ fannedOutAt: sql`now()` }).where(eq(outboundEvents.id, messageId));
}

/**
 * Publishes inside the caller's transaction and fans out once it commits: the event exists if and
 * only if the change it reports does. A fan-out lost to a crash is redone by `fanOutStragglers`.
 */
export async function publishAfterCommit(tx: Queryable, ctx: ProjectContext, event: Publication): Promise<string> {
  const messageId = await publish(tx, ctx, event);
  await afterCommit(async () => void (await fanOut(await getDb(), messageId)));
  return messageId;
}

/** Published events not fanned out a while after they happened (the process died first): fanned out now. */
export async function fanOutStragglers(db: Queryable, olderThanSeconds = 30): Promise<number> {
  const stragglers = await db
    .select({ id: outboundEvents.id })
    .from(outboundEvents)
    .where(and(isNull(outboundEvents.fannedOutAt), lt(outboundEvents.createdAt, sql`now() - make_interval(secs => ${olderThanSeconds})`)))
    .limit(500);
  // One event that cannot be fanned out does not hold back the others; the run still fails, so it is retried.
  const failures: unknown[] = [];
  for (const { id } of stragglers) await fanOut(db, id).catch((err) => failures.push(err));
  if (failures.length) throw new AggregateError(failures, `${failures.length} of ${stragglers.length} events could not be fanned out`);
  return stragglers.length;
}

/** The topic, or how it follows from the intent as it is now (its confirmation: successful or failed). */
export type IntentTopicOf = IntentTopic | ((intent: typeof transactionIntents.$inferSelect) => IntentTopic);

/** An intent's state change as its event: one per intent and topic, whether published alone or with others. */
const intentEvent = (intent: typeof transactionIntents.$inferSelect, topic: IntentTopic): Publication => ({
  topic,
  objectId: intent.id,
  data: serializeIntent(intent),
  requestId: intent.requestId,
  dedupeKey: `${intent.id}:${topic}`,
});

async function intentPublication(db: Queryable, intentId: string, topicOf: IntentTopicOf) {
  const [intent] = await db.select().from(transactionIntents).where(eq(transactionIntents.id, intentId));
  if (!intent) return null;
  const topic = typeof topicOf === "function" ? topicOf(intent) : topicOf;
  return { ctx: { projectId: intent.projectId, livemode: intent.livemode }, event: intentEvent(intent, topic) };
}

/** An intent's state change, as the project webhook and the topic's subscriptions receive it: `{type, date, data: <transactionIntent>}`. */
export async function publishIntentEvent(db: Queryable, intentId: string, topic: IntentTopicOf): Promise<string | null> {
  const publication = await intentPublication(db, intentId, topic);
  if (!publication) return null;
  return publishNow(db, publication.ctx, publication.event);
}

/** The same, for a state change made inside a transaction (a cancellation by an API request): fanned out after the commit. */
export async function publishIntentEventAfterCommit(tx: Queryable, intentId: string, topic: IntentTopic): Promise<string | null> {
  const publication = await intentPublication(tx, intentId, topic);
  return publication ? publishAfterCommit(tx, publication.ctx, publication.event) : null;
}

/**
 * Many intents' state changes at once (a bundle's landings or confirmations), as publishIntentEvent publishes each:
 * the targets looked up once per project, mode and topic, the events recorded in one statement, fanned out at once.
 * An event already recorded (the relay's step ran again after a crash) is fanned out as far as it had not been.
 */
export async function publishIntentEvents(db: Queryable, intents: (typeof transactionIntents.$inferSelect)[], topicOf: IntentTopicOf): Promise<number> {
  const groups = new Map<string, { ctx: ProjectContext; topic: IntentTopic; intents: (typeof transactionIntents.$inferSelect)[] }>();
  for (const intent of intents) {
    const topic = typeof topicOf === "function" ? topicOf(intent) : topicOf;
    const key = `${intent.projectId}:${intent.livemode}:${topic}`;
    const group = groups.get(key) ?? { ctx: { projectId: intent.projectId, livemode: intent.livemode }, topic, intents: [] };
    group.intents.push(intent);
    groups.set(key, group);
  }
  let published = 0;
  for (const { ctx, topic, intents: members } of groups.values()) {
    const targets = await deliveryTargets(db, ctx, topic);
    const rows = members.map((intent) => eventRow(ctx, intentEvent(intent, topic), targets.length === 0));
    const inserted = await db.insert(outboundEvents).values(rows).onConflictDoNothing().returning({ id: outboundEvents.id, dedupeKey: outboundEvents.dedupeKey });
    published += rows.length;
    if (targets.length && inserted.length) {
      await sendJobs(inserted.flatMap(({ id }) => targets.map((target) => deliveryJob(id, target, ctx.projectId))));
      await db.update(outboundEvents).set({ fannedOutAt: sql`now()` }).where(inArray(outboundEvents.id, inserted.map((r) => r.id)));
    }
    // Recorded by an earlier attempt: fanned out if it had not been (fanOut does nothing once it was).
    if (inserted.length < rows.length) {
      const done = new Set(inserted.map((r) => r.dedupeKey));
      const again = await db
        .select({ id: outboundEvents.id })
        .from(outboundEvents)
        .where(and(eq(outboundEvents.projectId, ctx.projectId), inArray(outboundEvents.dedupeKey, rows.map((r) => r.dedupeKey).filter((k) => !done.has(k)))));
      for (const { id } of again) await fanOut(db, id);
    }
  }
  return published;
}
