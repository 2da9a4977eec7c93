import { z } from "zod";
import { envNumber } from "@/lib/config";
import { APPROVAL_TOPIC, TOPICS } from "@/lib/deliveries/topics";
import { listInput } from "@/lib/http/fields";

const topicField = () => z.enum(TOPICS, { error: `Expected one of: ${TOPICS.join(", ")}.` });

/** The SDK knows "email" too; it is refused with its own message (lib/subscriptions/service.ts). */
export const TRIGGER_TYPES = ["webhook", "email"] as const;

export const MAX_TRIGGERS = 10;

/** Subscriptions a project may have in one mode (not deleted): each event fans out to all their triggers. */
export const maxSubscriptions = () => envNumber("SUBSCRIPTIONS_PER_PROJECT", 100, { min: 1, integer: true });

/** A test send without a target goes to at most this many triggers on the `test` topic (the oldest first)… */
export const maxTestTriggers = () => envNumber("SUBSCRIPTION_TEST_MAX_TRIGGERS", 10, { min: 1, integer: true });

/** …this many at a time, as do a subscription's own triggers. */
export const testConcurrency = () => envNumber("SUBSCRIPTION_TEST_CONCURRENCY", 5, { min: 1, integer: true });

export const triggerInput = z.strictObject({
  target: z.string().trim().min(1, "Expected a URL.").max(2000),
  type: z.enum(TRIGGER_TYPES, { error: `Expected one of: ${TRIGGER_TYPES.join(", ")}.` }),
  /** The subscription's id (sub_), as the SDK's CreateTriggerRequest may carry it. */
  subscription: z.string().max(100).optional(),
});

export const createSubscriptionInput = z.strictObject({
  topic: topicField(),
  triggers: z
    .array(triggerInput, { error: "Expected an array of triggers ({target, type})." })
    .min(1, "At least one trigger is required.")
    .max(MAX_TRIGGERS, `At most ${MAX_TRIGGERS} triggers.`),
});

export const listSubscriptionsInput = z.strictObject({ ...listInput, topic: topicField().optional() });

export const listTriggersInput = z.strictObject({ ...listInput });

export const testTriggerInput = z.strictObject({
  /** A subscription (sub_): a test event to each of its triggers, whatever its topic. */
  subscription: z.string().max(100).optional(),
  /** A URL: one test event to it (not saved anywhere, so not signed with a whsec_ secret). */
  target: z.string().trim().min(1, "Expected a URL.").max(2000).optional(),
});

const LOG_TOPICS = [...TOPICS, APPROVAL_TOPIC] as const;

export const listLogsInput = z.strictObject({
  ...listInput,
  /** A webhook topic, or sponsorship.approval: the calls of approval_webhook policy rules. */
  topic: z.enum(LOG_TOPICS, { error: `Expected one of: ${LOG_TOPICS.join(", ")}.` }).optional(),
  status: z.enum(["success", "failed"], { error: "Expected success or failed." }).optional(),
  /** The related object's id (tin_, eve_ …). */
  object: z.string().max(100).optional(),
  subscription: z.string().max(100).optional(),
  trigger: z.string().max(100).optional(),
  /** The x-request-id of the API request that caused the event. */
  requestID: z.string().max(100).optional(),
});

export const triggerResponse = z.object({
  id: z.string(),
  object: z.literal("trigger"),
  target: z.string(),
  type: z.enum(["webhook"]),
  subscription: z.string(),
  createdAt: z.number().int(),
  updatedAt: z.number().int(),
  status: z.enum(["enabled", "disabled"]),
  /** The first failed attempt of the current run of failures (unix seconds), null while it delivers. */
  failingSince: z.number().int().nullable(),
  disabledAt: z.number().int().nullable(),
  disabledReason: z.string().nullable(),
  /** The Standard Webhooks signing secret (whsec_…): only in the answer that created the trigger. */
  secret: z.string().optional(),
});

export const subscriptionResponse = z.object({
  id: z.string(),
  object: z.literal("subscription"),
  topic: z.enum(TOPICS),
  triggers: z.array(triggerResponse),
  createdAt: z.number().int(),
  updatedAt: z.number().int(),
});

export const logResponse = z.object({
  /** eve_ (rows from before subscriptions: whd_). */
  id: z.string(),
  object: z.literal("log"),
  createdAt: z.number().int(),
  topic: z.string(),
  status: z.enum(["success", "failed"]),
  /** Null for the project webhook and for tests sent to a URL. */
  subscription: z.string().nullable(),
  trigger: z.string().nullable(),
  requestID: z.string().nullable(),
  /** The delivered event (msg_): the `webhook-id` header, the same on every attempt. */
  event: z.string().nullable(),
  relatedObject: z.string().nullable(),
  url: z.string(),
  attempt: z.number().int(),
  reason: z.enum(["scheduled", "redelivery", "test"]),
  responseStatus: z.number().int().nullable(),
  durationMs: z.number().int(),
  error: z.string().nullable(),
  /** The start of the receiver's answer (at most 1 KiB): on a single log entry only. */
  responseBody: z.string().nullable().optional(),
});

export const testTriggerResponse = z.object({
  /** At least one target answered 2xx. */
  sent: z.boolean(),
  deliveries: z.array(
    z.object({
      id: z.string(),
      trigger: z.string().nullable(),
      status: z.enum(["success", "failed"]),
      responseStatus: z.number().int().nullable(),
      error: z.string().nullable(),
      durationMs: z.number().int(),
    }),
  ),
});

export type TriggerInput = z.output<typeof triggerInput>;
export type CreateSubscriptionInput = z.output<typeof createSubscriptionInput>;
export type ListSubscriptionsInput = z.output<typeof listSubscriptionsInput>;
export type ListLogsInput = z.output<typeof listLogsInput>;
export type TestTriggerInput = z.output<typeof testTriggerInput>;
export type TriggerResponse = z.infer<typeof triggerResponse>;
export type SubscriptionResponse = z.infer<typeof subscriptionResponse>;
export type LogResponse = z.infer<typeof logResponse>;
export type TestTriggerResponse = z.infer<typeof testTriggerResponse>;
