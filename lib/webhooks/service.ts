import crypto from "node:crypto";
import { and, eq, sql } from "drizzle-orm";
import { z } from "zod";
import type { Queryable } from "@/lib/db/client";
import { webhookDeliveries, webhookSettings } from "@/lib/db/schema";
import { notFound } from "@/lib/http/errors";
import { listPage } from "@/lib/http/list";
import { unixSeconds } from "@/lib/http/resource";
import { newId } from "@/lib/ids";
import { checkOutboundUrl, outboundFetch, OutboundRefusedError } from "@/lib/outbound";
import { currentSecretKey, type ProjectContext } from "@/lib/projects/service";

export const TOPICS = ["transaction_intent.broadcast", "transaction_intent.successful", "transaction_intent.failed", "transaction_intent.cancelled"] as const;
export type Topic = (typeof TOPICS)[number];

export const webhookUrlField = () =>
  z
    .url({ protocol: /^https?$/, error: "Expected an http(s) URL" })
    .max(2000);

export const setWebhookInput = z.strictObject({ url: webhookUrlField() });

export const webhookResponse = z.object({
  object: z.literal("webhook"),
  url: z.string(),
  livemode: z.boolean(),
  createdAt: z.number().int(),
  updatedAt: z.number().int(),
});

type WebhookRow = typeof webhookSettings.$inferSelect;

const serialize = (row: WebhookRow) => ({
  object: "webhook" as const,
  url: row.url,
  livemode: row.livemode,
  createdAt: unixSeconds(row.createdAt),
  updatedAt: unixSeconds(row.updatedAt),
});

const scoped = (ctx: ProjectContext) => and(eq(webhookSettings.projectId, ctx.projectId), eq(webhookSettings.livemode, ctx.livemode));

export async function setWebhook(db: Queryable, ctx: ProjectContext, url: string) {
  await checkOutboundUrl(url, { livemode: ctx.livemode, field: "url" });
  const [row] = await db
    .insert(webhookSettings)
    .values({ projectId: ctx.projectId, livemode: ctx.livemode, url })
    .onConflictDoUpdate({ target: [webhookSettings.projectId, webhookSettings.livemode], set: { url, updatedAt: sql`now()` } })
    .returning();
  return serialize(row!);
}

export async function deleteWebhook(db: Queryable, ctx: ProjectContext) {
  const [row] = await db.delete(webhookSettings).where(scoped(ctx)).returning();
  if (!row) throw notFound("webhook", ctx.livemode ? "live" : "test");
  return { ...serialize(row), deleted: true as const };
}

export async function webhookOf(db: Queryable, ctx: ProjectContext): Promise<string | null> {
  const [row] = await db.select({ url: webhookSettings.url }).from(webhookSettings).where(scoped(ctx));
  return row?.url ?? null;
}

/**
 * What the official SDK's `constructWebhookEvent` checks: hex HMAC-SHA256 of the raw body, keyed
 * by the secret key with its first "sk_" and "test_" and every "-" removed (exactly its rule).
 */
export function webhookSignature(secretKey: string, body: string): string {
  const key = secretKey.replace("sk_", "").replace("test_", "").replace(/-/g, "");
  return crypto.createHmac("sha256", key).update(body, "utf8").digest("hex");
}

export class WebhookDeliveryError extends Error {}

/** The dashboard's "send test event": signed like every event, so a receiver's verification can be checked. */
export const TEST_TOPIC = "test";

const DELIVERY_TIMEOUT_MS = 10_000;

/**
 * POSTs one event to the project's webhook and records the attempt; a non-2xx answer or a
 * network error throws, for the caller's retries. Returns false when no webhook is set.
 */
export async function deliverEvent(
  db: Queryable,
  ctx: ProjectContext,
  event: { topic: Topic | typeof TEST_TOPIC; objectId: string; data: unknown; attempt: number },
): Promise<boolean> {
  const url = await webhookOf(db, ctx);
  if (!url) return false;
  const secret = await currentSecretKey(db, ctx);
  if (!secret) throw new WebhookDeliveryError(`project ${ctx.projectId} has no ${ctx.livemode ? "live" : "test"} secret key to sign with`);
  const body = JSON.stringify({ type: event.topic, date: Math.floor(Date.now() / 1000), data: event.data });
  const started = Date.now();
  let responseStatus: number | null = null;
  let error: string | null = null;
  try {
    // Checked again at each delivery: DNS may have changed since the URL was set. Redirects are not followed.
    const res = await outboundFetch(
      url,
      {
        method: "POST",
        headers: { "content-type": "application/json", "openfort-signature": webhookSignature(secret, body), "user-agent": "smart-wallet-service-webhooks" },
        body,
        signal: AbortSignal.timeout(DELIVERY_TIMEOUT_MS),
      },
      { livemode: ctx.livemode },
    );
    responseStatus = res.status;
    await res.body?.cancel();
    if (res.status < 200 || res.status >= 300) error = `answered ${res.status}`;
  } catch (err) {
    if (err instanceof OutboundRefusedError) error = `refused: ${err.message}`;
    else error = (err as Error).name === "TimeoutError" ? `no answer within ${DELIVERY_TIMEOUT_MS / 1000} s` : `could not connect: ${(err as Error).message}`;
  }
  await db.insert(webhookDeliveries).values({
    id: newId("webhookDelivery"),
    projectId: ctx.projectId,
    livemode: ctx.livemode,
    topic: event.topic,
    url,
    objectId: event.objectId,
    attempt: event.attempt,
    status: error ? "failed" : "success",
    responseStatus,
    error,
    durationMs: Date.now() - started,
  });
  // Only the origin: a webhook's path or query often carries the receiver's token.
  if (error) throw new WebhookDeliveryError(`webhook ${new URL(url).origin} ${error}`);
  return true;
}

/**
 * POSTs one test event now (not queued, so the developer sees the answer at once) and records
 * the attempt with the other deliveries. Answers the attempt, or null when no webhook is set.
 */
export async function sendTestEvent(db: Queryable, ctx: ProjectContext) {
  const id = newId("event");
  const data = { id, object: "event", message: "A test event from the dashboard: your endpoint received and can verify our signature." };
  try {
    if (!(await deliverEvent(db, ctx, { topic: TEST_TOPIC, objectId: id, data, attempt: 1 }))) return null;
  } catch (err) {
    if (!(err instanceof WebhookDeliveryError)) throw err;
  }
  const [attempt] = await db.select().from(webhookDeliveries).where(and(eq(webhookDeliveries.projectId, ctx.projectId), eq(webhookDeliveries.objectId, id)));
  return attempt ?? null;
}

/** The mode's delivery attempts, newest first, for the dashboard. */
export async function listDeliveries(db: Queryable, ctx: ProjectContext, params: { limit: number; skip: number }) {
  return listPage(db, webhookDeliveries, and(eq(webhookDeliveries.projectId, ctx.projectId), eq(webhookDeliveries.livemode, ctx.livemode)), params);
}
