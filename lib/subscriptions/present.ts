import type { subscriptions, triggers, webhookDeliveries } from "@/lib/db/schema";
import type { Topic } from "@/lib/deliveries/topics";
import { unixSeconds } from "@/lib/http/resource";
import type { LogResponse, SubscriptionResponse, TriggerResponse } from "./schema";

export type SubscriptionRow = typeof subscriptions.$inferSelect;
export type TriggerRow = typeof triggers.$inferSelect;
export type LogRow = typeof webhookDeliveries.$inferSelect;

const seconds = (date: Date | null) => (date ? unixSeconds(date) : null);

export function presentTrigger(row: TriggerRow, secret?: string): TriggerResponse {
  return {
    id: row.id,
    object: "trigger",
    target: row.target,
    type: row.type,
    subscription: row.subscriptionId,
    createdAt: unixSeconds(row.createdAt),
    updatedAt: unixSeconds(row.updatedAt),
    status: row.disabledAt ? "disabled" : "enabled",
    failingSince: seconds(row.failingSince),
    disabledAt: seconds(row.disabledAt),
    disabledReason: row.disabledReason,
    ...(secret ? { secret } : {}),
  };
}

/** `secrets`: the new triggers' secrets by id, shown in the answer that made them only. */
export function presentSubscription(row: SubscriptionRow, triggerRows: TriggerRow[], secrets: Record<string, string> = {}): SubscriptionResponse {
  return {
    id: row.id,
    object: "subscription",
    topic: row.topic as Topic,
    triggers: triggerRows.map((t) => presentTrigger(t, secrets[t.id])),
    createdAt: unixSeconds(row.createdAt),
    updatedAt: unixSeconds(row.updatedAt),
  };
}

export function presentLog(row: LogRow, withBody = false): LogResponse {
  return {
    id: row.id,
    object: "log",
    createdAt: unixSeconds(row.createdAt),
    topic: row.topic,
    status: row.status,
    subscription: row.subscriptionId,
    trigger: row.triggerId,
    requestID: row.requestId,
    event: row.messageId,
    relatedObject: row.objectId,
    url: row.url,
    attempt: row.attempt,
    reason: row.reason,
    responseStatus: row.responseStatus,
    durationMs: row.durationMs,
    error: row.error,
    ...(withBody ? { responseBody: row.responseBody } : {}),
  };
}
