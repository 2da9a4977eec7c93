import { and, eq, sql } from "drizzle-orm";
import type { Queryable } from "@/lib/db/client";
import { outboundEvents, subscriptions, triggers, webhookDeliveries, webhookSettings } from "@/lib/db/schema";
import { inScope } from "@/lib/db/scope";
import { newId } from "@/lib/ids";
import { outboundFetch, OutboundRefusedError } from "@/lib/outbound";
import { currentSecretKey } from "@/lib/projects/service";
import { disableAfterMs } from "./schedule";
import { openSigningSecret, standardHeaders, webhookSecretOwner, webhookSignature } from "./signing";
import { metrics } from "@/lib/metrics";

const DELIVERY_TIMEOUT_MS = 10_000;
/** How much of a receiver's answer the delivery log keeps (webhook deliveries and approval-webhook calls). */
export const RESPONSE_BODY_BYTES = 1024;

/** The project webhook of the event's mode, or a trigger (`tri_`). */
export type Target = string;

export type AttemptReason = "scheduled" | "redelivery" | "test";

export interface AttemptResult {
  /** gone: the event, or the target (removed, deleted, disabled), no longer exists; nothing was sent. */
  outcome: "delivered" | "failed" | "gone";
  /** The log entry (eve_) of this attempt. */
  attemptId?: string;
  responseStatus?: number | null;
  error?: string | null;
  durationMs?: number;
  /** This failure disabled the trigger (it had failed for three days). */
  disabled?: boolean;
}

interface Destination {
  url: string;
  /** The Standard Webhooks secret, when the target has one. */
  secret: string | null;
  subscriptionId: string | null;
  triggerId: string | null;
}

async function destinationOf(db: Queryable, ctx: { projectId: string; livemode: boolean }, target: Target, reason: AttemptReason): Promise<Destination | null> {
  if (target === "webhook") {
    const [row] = await db.select().from(webhookSettings).where(inScope(webhookSettings, ctx));
    if (!row) return null;
    return { url: row.url, secret: row.encryptedSecret ? openSigningSecret(row.encryptedSecret, webhookSecretOwner(ctx)) : null, subscriptionId: null, triggerId: null };
  }
  const [row] = await db
    .select({ trigger: triggers, subscriptionDeleted: subscriptions.deletedAt })
    .from(triggers)
    .innerJoin(subscriptions, eq(subscriptions.id, triggers.subscriptionId))
    .where(inScope(triggers, ctx, eq(triggers.id, target)));
  if (!row || row.trigger.deletedAt || row.subscriptionDeleted) return null;
  // A disabled trigger gets no scheduled attempts; a redelivery from the dashboard still goes (and re-enables it on success).
  if (row.trigger.disabledAt && reason === "scheduled") return null;
  return { url: row.trigger.target, secret: openSigningSecret(row.trigger.encryptedSecret, row.trigger.id), subscriptionId: row.trigger.subscriptionId, triggerId: row.trigger.id };
}

/** The headers of one attempt: the SDK's `openfort-signature`, and the Standard Webhooks trio when the target has a secret. */
export function deliveryHeaders(messageId: string, body: string, apiSecretKey: string, signingSecret: string | null, now = Date.now()): Record<string, string> {
  return {
    "content-type": "application/json",
    "user-agent": "smart-wallet-service-webhooks",
    "openfort-signature": webhookSignature(apiSecretKey, body),
    ...standardHeaders(messageId, body, signingSecret, now),
  };
}

async function readStart(res: Response): Promise<string> {
  if (!res.body) return "";
  const reader = res.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  try {
    while (size < RESPONSE_BODY_BYTES) {
      const { done, value } = await reader.read();
      if (done) break;
      chunks.push(value);
      size += value.length;
    }
  } finally {
    await reader.cancel().catch(() => {});
  }
  return Buffer.concat(chunks).subarray(0, RESPONSE_BODY_BYTES).toString("utf8");
}

/**
 * POSTs a published event to one target, once, and logs the attempt (the subscription log). A
 * trigger's health follows: a success clears its run of failures (and re-enables it), a failure
 * starts or extends it, and a scheduled failure three days into the run disables the trigger.
 * Never throws for the receiver's faults: they are the result.
 */
export async function attemptDelivery(
  db: Queryable,
  args: { messageId: string; target: Target; attempt: number; reason: AttemptReason; url?: string },
): Promise<AttemptResult> {
  const [message] = await db.select().from(outboundEvents).where(eq(outboundEvents.id, args.messageId));
  if (!message) return { outcome: "gone" };
  const ctx = { projectId: message.projectId, livemode: message.livemode };
  // An ad-hoc target (a test to a URL not saved anywhere) has no signing secret of its own.
  const destination = args.url ? { url: args.url, secret: null, subscriptionId: null, triggerId: null } : await destinationOf(db, ctx, args.target, args.reason);
  if (!destination) return { outcome: "gone" };
  const started = Date.now();
  let responseStatus: number | null = null;
  let responseBody: string | null = null;
  let error: string | null = null;
  const apiSecret = await currentSecretKey(db, ctx);
  if (!apiSecret) {
    error = `no ${ctx.livemode ? "live" : "test"} secret key to sign with`;
  } else {
    try {
      // Checked again at each attempt: DNS may have changed since the URL was set. Redirects are not followed.
      const res = await outboundFetch(
        destination.url,
        { method: "POST", headers: deliveryHeaders(message.id, message.body, apiSecret, destination.secret), body: message.body, signal: AbortSignal.timeout(DELIVERY_TIMEOUT_MS) },
        { livemode: ctx.livemode },
      );
      responseStatus = res.status;
      responseBody = await readStart(res).catch(() => null);
      if (res.status < 200 || res.status >= 300) error = `answered ${res.status}`;
    } catch (err) {
      if (err instanceof OutboundRefusedError) error = `refused: ${err.message}`;
      else error = (err as Error).name === "TimeoutError" ? `no answer within ${DELIVERY_TIMEOUT_MS / 1000} s` : `could not connect: ${(err as Error).message}`;
    }
  }
  const durationMs = Date.now() - started;
  metrics.deliveries.inc({ kind: args.url ? "url" : destination.triggerId ? "trigger" : "webhook", outcome: error ? "failed" : "success" });
  const attemptId = newId("event");
  await db.insert(webhookDeliveries).values({
    id: attemptId,
    ...ctx,
    messageId: message.id,
    subscriptionId: destination.subscriptionId,
    triggerId: destination.triggerId,
    target: args.url ? "url" : args.target,
    requestId: message.requestId,
    topic: message.topic,
    url: destination.url,
    objectId: message.objectId,
    attempt: args.attempt,
    reason: args.reason,
    status: error ? "failed" : "success",
    responseStatus,
    responseBody,
    error,
    durationMs,
  });
  let disabled = false;
  if (destination.triggerId && !args.url) disabled = await recordHealth(db, destination.triggerId, !error, args.reason);
  return { outcome: error ? "failed" : "delivered", attemptId, responseStatus, error, durationMs, disabled };
}

/** "3.2 days", "5 hours", "4 seconds": a shortened disable period (as in tests) reads right too. */
function duration(ms: number): string {
  const units: [string, number][] = [["day", 86_400_000], ["hour", 3_600_000], ["minute", 60_000], ["second", 1000]];
  const [unit, size] = units.find(([, size]) => ms >= size) ?? units.at(-1)!;
  const n = Math.round((ms / size) * 10) / 10;
  return `${n} ${unit}${n === 1 ? "" : "s"}`;
}

/**
 * Updates a trigger's run of failures; answers whether this failure disabled it. Only scheduled
 * attempts start or extend a run: a test or redelivery that failed days before the next event
 * would otherwise have that event's first failure disable the trigger at once.
 */
async function recordHealth(db: Queryable, triggerId: string, ok: boolean, reason: AttemptReason): Promise<boolean> {
  if (ok) {
    await db.update(triggers).set({ failingSince: null, disabledAt: null, disabledReason: null, updatedAt: sql`now()` }).where(eq(triggers.id, triggerId));
    return false;
  }
  if (reason !== "scheduled") return false;
  // Measured on the database's clock, which set failingSince (an app server's may differ). RETURNING sees the new row.
  const [row] = await db
    .update(triggers)
    .set({ failingSince: sql`coalesce(${triggers.failingSince}, now())` })
    .where(eq(triggers.id, triggerId))
    .returning({ failingForMs: sql<number>`(extract(epoch from now() - ${triggers.failingSince}) * 1000)::float8`, disabledAt: triggers.disabledAt });
  if (!row || row.disabledAt) return false;
  const failingFor = Number(row.failingForMs);
  if (failingFor < disableAfterMs()) return false;
  const [disabled] = await db
    .update(triggers)
    .set({ disabledAt: sql`now()`, disabledReason: `every delivery failed for ${duration(failingFor)}`, updatedAt: sql`now()` })
    .where(and(eq(triggers.id, triggerId), sql`${triggers.disabledAt} is null`))
    .returning({ id: triggers.id });
  return Boolean(disabled);
}
