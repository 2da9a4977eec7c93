/** The topics of transaction-intent state changes: the project webhook gets these. */
export const INTENT_TOPICS = ["transaction_intent.broadcast", "transaction_intent.successful", "transaction_intent.failed", "transaction_intent.cancelled"] as const;

/** The balance monitors' topics (event definitions, lib/monitors). */
export const BALANCE_TOPICS = ["balance.project", "balance.contract", "balance.dev_account"] as const;

/** Every topic an event or subscription may name (the spec's Events section). */
export const TOPICS = [...INTENT_TOPICS, ...BALANCE_TOPICS, "test"] as const;

export type IntentTopic = (typeof INTENT_TOPICS)[number];
export type BalanceTopic = (typeof BALANCE_TOPICS)[number];
export type Topic = (typeof TOPICS)[number];

export const isIntentTopic = (topic: string): topic is IntentTopic => (INTENT_TOPICS as readonly string[]).includes(topic);

/**
 * The delivery log's topic of an approval-webhook call (lib/sponsorship/approval.ts): logged beside deliveries, but no
 * event of it is published, so nothing subscribes to it and no call is redelivered.
 */
export const APPROVAL_TOPIC = "sponsorship.approval";
