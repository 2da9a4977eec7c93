import { and, eq, isNull, max } from "drizzle-orm";
import type { Queryable } from "@/lib/db/client";
import { triggers, webhookDeliveries } from "@/lib/db/schema";
import { inScope } from "@/lib/db/scope";
import { attemptDelivery, type AttemptResult } from "@/lib/deliveries/attempt";
import { deliveryTargets, publishTest } from "@/lib/deliveries/publish";
import { APPROVAL_TOPIC } from "@/lib/deliveries/topics";
import { badRequest, conflict, notFound, referenced } from "@/lib/errors";
import { listPage } from "@/lib/http/list";
import { currentRequestId } from "@/lib/http/request-context";
import { checkOutboundUrl } from "@/lib/outbound";
import type { ProjectContext } from "@/lib/tenant";
import { presentLog, type LogRow } from "./present";
import { maxTestTriggers, testConcurrency, type ListLogsInput, type TestTriggerInput, type TestTriggerResponse } from "./schema";
import { subscriptionRow } from "./service";

/** Every delivery attempt of the mode (project webhook, triggers, tests), newest first, filtered. */
export async function listLogs(db: Queryable, ctx: ProjectContext, input: ListLogsInput) {
  const where = inScope(
    webhookDeliveries,
    ctx,
    input.topic ? eq(webhookDeliveries.topic, input.topic) : undefined,
    input.status ? eq(webhookDeliveries.status, input.status) : undefined,
    input.object ? eq(webhookDeliveries.objectId, input.object) : undefined,
    input.subscription ? eq(webhookDeliveries.subscriptionId, input.subscription) : undefined,
    input.trigger ? eq(webhookDeliveries.triggerId, input.trigger) : undefined,
    input.requestID ? eq(webhookDeliveries.requestId, input.requestID) : undefined,
  );
  const { rows, total } = await listPage(db, webhookDeliveries, where, input);
  return { data: rows.map((r) => presentLog(r)), total };
}

async function logRow(db: Queryable, ctx: ProjectContext, id: string): Promise<LogRow> {
  const [row] = await db.select().from(webhookDeliveries).where(inScope(webhookDeliveries, ctx, eq(webhookDeliveries.id, id)));
  if (!row) throw notFound("log", id);
  return row;
}

export const getLog = async (db: Queryable, ctx: ProjectContext, id: string) => presentLog(await logRow(db, ctx, id), true);

/**
 * The dashboard's "Redeliver": one attempt now of the same event (same body, same webhook-id) to
 * the same target: the trigger, the project webhook (at its current URL), or the URL a test went to.
 */
export async function redeliverLog(db: Queryable, ctx: ProjectContext, id: string) {
  const row = await logRow(db, ctx, id);
  if (row.topic === APPROVAL_TOPIC) throw conflict(`Log ${row.id} is an approval webhook call: its answer decided one sponsorship when it was asked, so it is not sent again.`);
  if (!row.messageId) {
    throw conflict(`Log ${row.id} is from before events were stored with their body, so it cannot be sent again.`);
  }
  // A test sent to a bare URL goes there again; anything else to its trigger or the webhook as they are now.
  const adHoc = row.target === "url";
  const target = adHoc ? row.url : row.target;
  const [previous] = await db
    .select({ attempt: max(webhookDeliveries.attempt) })
    .from(webhookDeliveries)
    .where(
      and(
        eq(webhookDeliveries.messageId, row.messageId),
        eq(webhookDeliveries.target, row.target),
        adHoc ? eq(webhookDeliveries.url, row.url) : undefined,
      ),
    );
  if (adHoc) await checkOutboundUrl(row.url, { livemode: ctx.livemode, field: "url" });
  const result = await attemptDelivery(db, {
    messageId: row.messageId,
    target,
    attempt: (previous?.attempt ?? row.attempt) + 1,
    reason: "redelivery",
    ...(adHoc ? { url: row.url } : {}),
  });
  if (result.outcome === "gone" || !result.attemptId) {
    throw conflict(row.triggerId ? `Trigger ${row.triggerId} (or its subscription) was deleted: there is nowhere to redeliver to.` : "The project webhook was removed: there is nowhere to redeliver to.");
  }
  return presentLog(await logRow(db, ctx, result.attemptId), true);
}

const TEST_MESSAGE = "A test event: your endpoint received it and can verify its signatures.";

/**
 * Where a test goes: a subscription's triggers (whatever its topic; a disabled one too, so a fixed
 * receiver can be checked), a URL, or else the enabled triggers of the mode subscribed to `test`, the oldest
 * SUBSCRIPTION_TEST_MAX_TRIGGERS of them (one request must not fan out to every trigger a project made).
 */
async function testTargets(db: Queryable, ctx: ProjectContext, input: TestTriggerInput): Promise<{ target: string; url?: string }[]> {
  if (input.subscription !== undefined && input.target !== undefined) {
    throw badRequest("Give either subscription or target, not both.", { target: { value: input.target, message: "not with subscription" } });
  }
  if (input.target !== undefined) {
    await checkOutboundUrl(input.target, { livemode: ctx.livemode, field: "target" });
    return [{ target: input.target, url: input.target }];
  }
  if (input.subscription !== undefined) {
    const subscription = await referenced(subscriptionRow(db, ctx, input.subscription), "subscription", input.subscription);
    const rows = await db
      .select({ id: triggers.id })
      .from(triggers)
      .where(and(eq(triggers.subscriptionId, subscription.id), isNull(triggers.deletedAt)));
    return rows.map((r) => ({ target: r.id }));
  }
  return (await deliveryTargets(db, ctx, "test", undefined, maxTestTriggers())).map((target) => ({ target }));
}

/** `work` over `items`, at most `limit` at a time; the answers in the items' order. */
async function boundedMap<T, R>(items: T[], limit: number, work: (item: T) => Promise<R>): Promise<R[]> {
  const out: R[] = new Array(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const i = next++;
      out[i] = await work(items[i]!);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return out;
}

/**
 * Publishes one `test` event and attempts each target once, now, so the caller sees each answer
 * (logged like every attempt, reason "test"). No retries: the event is marked fanned out so the
 * minute sweep does not send it to the `test` subscribers as well.
 */
export async function sendTest(db: Queryable, ctx: ProjectContext, input: TestTriggerInput): Promise<TestTriggerResponse> {
  const targets = await testTargets(db, ctx, input);
  if (targets.length === 0) return { sent: false, deliveries: [] };
  const messageId = await publishTest(db, ctx, TEST_MESSAGE, currentRequestId());
  const results = await boundedMap(targets, testConcurrency(), async ({ target, url }) => ({
    target,
    url,
    result: await attemptDelivery(db, { messageId, target, attempt: 1, reason: "test", ...(url ? { url } : {}) }),
  }));
  const deliveries = results
    .filter((r): r is typeof r & { result: AttemptResult & { attemptId: string } } => r.result.outcome !== "gone" && Boolean(r.result.attemptId))
    .map(({ target, url, result }) => ({
      id: result.attemptId,
      trigger: url ? null : target,
      status: result.outcome === "delivered" ? ("success" as const) : ("failed" as const),
      responseStatus: result.responseStatus ?? null,
      error: result.error ?? null,
      durationMs: result.durationMs ?? 0,
    }));
  return { sent: deliveries.some((d) => d.status === "success"), deliveries };
}
