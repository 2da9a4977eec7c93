import { eq, sql } from "drizzle-orm";
import { z } from "zod";
import type { Queryable } from "@/lib/db/client";
import { webhookDeliveries, webhookSettings } from "@/lib/db/schema";
import { inScope } from "@/lib/db/scope";
import { notFound } from "@/lib/errors";
import { listPage } from "@/lib/http/list";
import { unixSeconds } from "@/lib/http/resource";
import { attemptDelivery } from "@/lib/deliveries/attempt";
import { publishTest } from "@/lib/deliveries/publish";
import { newSigningSecret, sealSigningSecret, webhookSecretOwner } from "@/lib/deliveries/signing";
import { currentRequestId } from "@/lib/http/request-context";
import { checkOutboundUrl } from "@/lib/outbound";
import type { ProjectContext } from "@/lib/tenant";

export const webhookUrlField = () =>
  z
    .url({ protocol: /^https?$/, error: "Expected an http(s) URL" })
    .max(2000);

export const setWebhookInput = z.strictObject({ url: webhookUrlField() });

export const webhookResponse = z.object({
  object: z.literal("webhook"),
  url: z.string(),
  /** The Standard Webhooks signing secret (whsec_…): only in the answer that made it. */
  secret: z.string().optional(),
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

/**
 * Sets the mode's webhook URL. The first set (and the first after rows from before signing
 * secrets existed) makes its Standard Webhooks secret, answered this once as `secret`; changing
 * the URL keeps it. `rollWebhookSecret` replaces it.
 */
export async function setWebhook(db: Queryable, ctx: ProjectContext, url: string) {
  await checkOutboundUrl(url, { livemode: ctx.livemode, field: "url" });
  const secret = newSigningSecret();
  const sealed = sealSigningSecret(secret, webhookSecretOwner(ctx));
  const [row] = await db
    .insert(webhookSettings)
    .values({ projectId: ctx.projectId, livemode: ctx.livemode, url, encryptedSecret: sealed })
    .onConflictDoUpdate({
      target: [webhookSettings.projectId, webhookSettings.livemode],
      set: { url, encryptedSecret: sql`coalesce(${webhookSettings.encryptedSecret}, excluded.encrypted_secret)`, updatedAt: sql`now()` },
    })
    .returning();
  return { ...serialize(row!), ...(row!.encryptedSecret === sealed ? { secret } : {}) };
}

/** A new signing secret for the mode's webhook, answered once; the old one stops verifying at once. */
export async function rollWebhookSecret(db: Queryable, ctx: ProjectContext): Promise<string | null> {
  const secret = newSigningSecret();
  const [row] = await db
    .update(webhookSettings)
    .set({ encryptedSecret: sealSigningSecret(secret, webhookSecretOwner(ctx)), updatedAt: sql`now()` })
    .where(inScope(webhookSettings, ctx))
    .returning({ url: webhookSettings.url });
  return row ? secret : null;
}

export async function deleteWebhook(db: Queryable, ctx: ProjectContext) {
  const [row] = await db.delete(webhookSettings).where(inScope(webhookSettings, ctx)).returning();
  if (!row) throw notFound("webhook", ctx.livemode ? "live" : "test");
  return { ...serialize(row), deleted: true as const };
}

export async function webhookOf(db: Queryable, ctx: ProjectContext): Promise<string | null> {
  const [row] = await db.select({ url: webhookSettings.url }).from(webhookSettings).where(inScope(webhookSettings, ctx));
  return row?.url ?? null;
}

/**
 * POSTs one test event now (not queued, so the developer sees the answer at once) and records
 * the attempt with the other deliveries. Answers the attempt, or null when no webhook is set.
 */
export async function sendTestEvent(db: Queryable, ctx: ProjectContext) {
  if (!(await webhookOf(db, ctx))) return null;
  const messageId = await publishTest(db, ctx, "A test event from the dashboard: your endpoint received and can verify our signature.", currentRequestId());
  const result = await attemptDelivery(db, { messageId, target: "webhook", attempt: 1, reason: "test" });
  if (!result.attemptId) return null;
  const [attempt] = await db.select().from(webhookDeliveries).where(eq(webhookDeliveries.id, result.attemptId));
  return attempt ?? null;
}

/** The project webhook's delivery attempts in the mode, newest first, for the dashboard. */
export async function listDeliveries(db: Queryable, ctx: ProjectContext, params: { limit: number; skip: number }) {
  return listPage(db, webhookDeliveries, inScope(webhookDeliveries, ctx, eq(webhookDeliveries.target, "webhook")), params);
}
