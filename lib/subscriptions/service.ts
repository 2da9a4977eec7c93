import { asc, count, eq, inArray, isNull, sql, type SQL } from "drizzle-orm";
import type { Queryable } from "@/lib/db/client";
import { subscriptions, triggers } from "@/lib/db/schema";
import { inScope } from "@/lib/db/scope";
import { newSigningSecret, sealSigningSecret } from "@/lib/deliveries/signing";
import { badRequest, notFound } from "@/lib/errors";
import { listPage, type ListParams } from "@/lib/http/list";
import { newId } from "@/lib/ids";
import { checkOutboundUrl } from "@/lib/outbound";
import type { ProjectContext } from "@/lib/tenant";
import { presentSubscription, presentTrigger, type SubscriptionRow, type TriggerRow } from "./present";
import { MAX_TRIGGERS, maxSubscriptions, type CreateSubscriptionInput, type ListSubscriptionsInput, type TriggerInput } from "./schema";

// A deleted trigger is gone for every query here.
const liveTriggers = (ctx: ProjectContext, ...conditions: (SQL | undefined)[]) => inScope(triggers, ctx, isNull(triggers.deletedAt), ...conditions);

/**
 * A trigger as asked, checked: webhook only, and its target a URL the outbound rule allows in
 * this mode (https and public for live keys). `param` names it in 400s (`triggers[0]` or the body).
 */
async function checkTrigger(ctx: ProjectContext, input: TriggerInput, param: (field: string) => string) {
  if (input.type !== "webhook") {
    throw badRequest(`Invalid parameter ${param("type")}: trigger type ${input.type} is not supported; use webhook.`, {
      [param("type")]: { value: input.type, message: "not supported; use webhook" },
    });
  }
  await checkOutboundUrl(input.target, { livemode: ctx.livemode, field: param("target") });
}

/** A new trigger's row with its Standard Webhooks secret sealed to its id; the secret is answered once. */
function newTrigger(ctx: ProjectContext, subscriptionId: string, input: TriggerInput) {
  const id = newId("trigger");
  const secret = newSigningSecret();
  return { secret, row: { id, ...ctx, subscriptionId, type: "webhook" as const, target: input.target, encryptedSecret: sealSigningSecret(secret, id) } };
}

async function triggersOf(db: Queryable, ctx: ProjectContext, subscriptionIds: string[]): Promise<Map<string, TriggerRow[]>> {
  const byId = new Map<string, TriggerRow[]>(subscriptionIds.map((id) => [id, []]));
  if (subscriptionIds.length === 0) return byId;
  const rows = await db
    .select()
    .from(triggers)
    .where(liveTriggers(ctx, inArray(triggers.subscriptionId, subscriptionIds)))
    .orderBy(asc(triggers.createdAt), asc(triggers.id));
  for (const row of rows) byId.get(row.subscriptionId)?.push(row);
  return byId;
}

/**
 * 400 once the mode has as many subscriptions as it may (every event fans out to all their triggers). Serialized per
 * project and mode, so concurrent creations cannot all pass the count.
 */
async function holdsUnderCap(tx: Queryable, ctx: ProjectContext) {
  await tx.execute(sql`select pg_advisory_xact_lock(hashtext(${`subscriptions:${ctx.projectId}:${ctx.livemode}`}))`);
  const cap = maxSubscriptions();
  const [existing] = await tx.select({ n: count() }).from(subscriptions).where(inScope(subscriptions, ctx, isNull(subscriptions.deletedAt)));
  if ((existing?.n ?? 0) >= cap) {
    const mode = ctx.livemode ? "live" : "test";
    throw badRequest(`This project already has ${cap} subscriptions in ${mode} mode, the most it may have: delete one first (the operator sets the cap with SUBSCRIPTIONS_PER_PROJECT).`);
  }
}

export async function createSubscription(db: Queryable, ctx: ProjectContext, input: CreateSubscriptionInput) {
  for (const [i, trigger] of input.triggers.entries()) {
    const param = (field: string) => `triggers[${i}][${field}]`;
    // The subscription does not exist yet: no id a trigger names can be it.
    if (trigger.subscription) {
      throw badRequest(`Invalid parameter ${param("subscription")}: the subscription is being created; leave it out.`, {
        [param("subscription")]: { value: trigger.subscription, message: "leave it out when creating a subscription" },
      });
    }
    await checkTrigger(ctx, trigger, param);
  }
  const id = newId("subscription");
  const made = input.triggers.map((t) => newTrigger(ctx, id, t));
  return db.transaction(async (tx) => {
    await holdsUnderCap(tx, ctx);
    const [row] = await tx.insert(subscriptions).values({ id, ...ctx, topic: input.topic }).returning();
    // One microsecond apart: rows of one insert can share a clock reading, and the triggers keep
    // the order they were given in.
    const rows = await tx
      .insert(triggers)
      .values(made.map((m, i) => ({ ...m.row, createdAt: sql`now() + ${i} * interval '1 microsecond'`, updatedAt: sql`now()` })))
      .returning();
    const secrets = Object.fromEntries(made.map((m) => [m.row.id, m.secret]));
    const ordered = made.map((m) => rows.find((r) => r.id === m.row.id)!);
    return presentSubscription(row!, ordered, secrets);
  });
}

/** A subscription of this project and mode that is not deleted, or a 404. */
export async function subscriptionRow(db: Queryable, ctx: ProjectContext, id: string): Promise<SubscriptionRow> {
  const [row] = await db
    .select()
    .from(subscriptions)
    .where(inScope(subscriptions, ctx, eq(subscriptions.id, id), isNull(subscriptions.deletedAt)));
  if (!row) throw notFound("subscription", id);
  return row;
}

export async function getSubscription(db: Queryable, ctx: ProjectContext, id: string) {
  const row = await subscriptionRow(db, ctx, id);
  return presentSubscription(row, (await triggersOf(db, ctx, [row.id])).get(row.id)!);
}

export async function listSubscriptions(db: Queryable, ctx: ProjectContext, input: ListSubscriptionsInput) {
  const where = inScope(subscriptions, ctx, isNull(subscriptions.deletedAt), input.topic ? eq(subscriptions.topic, input.topic) : undefined);
  const { rows, total } = await listPage(db, subscriptions, where, input);
  const byId = await triggersOf(db, ctx, rows.map((r) => r.id));
  return { data: rows.map((r) => presentSubscription(r, byId.get(r.id)!)), total };
}

/** Soft delete, with its triggers: the log keeps pointing at them. Deleting again answers the same. */
export async function deleteSubscription(db: Queryable, ctx: ProjectContext, id: string) {
  return db.transaction(async (tx) => {
    const [row] = await tx
      .update(subscriptions)
      .set({ deletedAt: sql`coalesce(${subscriptions.deletedAt}, now())`, updatedAt: sql`now()` })
      .where(inScope(subscriptions, ctx, eq(subscriptions.id, id)))
      .returning({ id: subscriptions.id });
    if (!row) throw notFound("subscription", id);
    await tx.update(triggers).set({ deletedAt: sql`now()`, updatedAt: sql`now()` }).where(liveTriggers(ctx, eq(triggers.subscriptionId, id)));
    return { id, object: "subscription" as const, deleted: true as const };
  });
}

export async function createTrigger(db: Queryable, ctx: ProjectContext, subscriptionId: string, input: TriggerInput) {
  const subscription = await subscriptionRow(db, ctx, subscriptionId);
  if (input.subscription !== undefined && input.subscription !== subscription.id) {
    throw badRequest(`Invalid parameter subscription: it must be the subscription in the path (${subscription.id}).`, {
      subscription: { value: input.subscription, message: `must equal ${subscription.id}` },
    });
  }
  await checkTrigger(ctx, input, (field) => field);
  return db.transaction(async (tx) => {
    // Serializes trigger creation per subscription so the cap holds under concurrent requests.
    await tx.select({ id: subscriptions.id }).from(subscriptions).where(eq(subscriptions.id, subscription.id)).for("update");
    const [existing] = await tx.select({ n: count() }).from(triggers).where(liveTriggers(ctx, eq(triggers.subscriptionId, subscription.id)));
    if ((existing?.n ?? 0) >= MAX_TRIGGERS) {
      throw badRequest(`Subscription ${subscription.id} already has ${MAX_TRIGGERS} triggers, the most it may have.`, {
        target: { value: input.target, message: `at most ${MAX_TRIGGERS} triggers per subscription` },
      });
    }
    const made = newTrigger(ctx, subscription.id, input);
    const [row] = await tx.insert(triggers).values(made.row).returning();
    await tx.update(subscriptions).set({ updatedAt: sql`now()` }).where(eq(subscriptions.id, subscription.id));
    return presentTrigger(row!, made.secret);
  });
}

/** A live trigger of a live subscription of this project and mode, or a 404. */
export async function triggerRow(db: Queryable, ctx: ProjectContext, subscriptionId: string, triggerId: string): Promise<TriggerRow> {
  await subscriptionRow(db, ctx, subscriptionId);
  const [row] = await db.select().from(triggers).where(liveTriggers(ctx, eq(triggers.id, triggerId), eq(triggers.subscriptionId, subscriptionId)));
  if (!row) throw notFound("trigger", triggerId);
  return row;
}

export const getTrigger = async (db: Queryable, ctx: ProjectContext, subscriptionId: string, triggerId: string) =>
  presentTrigger(await triggerRow(db, ctx, subscriptionId, triggerId));

export async function listTriggers(db: Queryable, ctx: ProjectContext, subscriptionId: string, params: ListParams) {
  await subscriptionRow(db, ctx, subscriptionId);
  const { rows, total } = await listPage(db, triggers, liveTriggers(ctx, eq(triggers.subscriptionId, subscriptionId)), params);
  return { data: rows.map((r) => presentTrigger(r)), total };
}

export async function deleteTrigger(db: Queryable, ctx: ProjectContext, subscriptionId: string, triggerId: string) {
  const row = await triggerRow(db, ctx, subscriptionId, triggerId);
  await db.update(triggers).set({ deletedAt: sql`now()`, updatedAt: sql`now()` }).where(eq(triggers.id, row.id));
  return { id: row.id, object: "trigger" as const, deleted: true as const };
}

/** The dashboard's re-enable of a trigger disabled after days of failures: its run of failures starts over. */
export async function enableTrigger(db: Queryable, ctx: ProjectContext, subscriptionId: string, triggerId: string) {
  const row = await triggerRow(db, ctx, subscriptionId, triggerId);
  const [updated] = await db
    .update(triggers)
    .set({ disabledAt: null, disabledReason: null, failingSince: null, updatedAt: sql`now()` })
    .where(eq(triggers.id, row.id))
    .returning();
  return presentTrigger(updated!);
}
