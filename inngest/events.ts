import { eventType } from "inngest";
import { z } from "zod";

/**
 * Every event the service sends, declared once: its name, its data (a zod schema, which Inngest v4
 * takes as the event type's schema: the successor of v3's EventSchemas) and the id that
 * deduplicates it (a second send with the same id starts nothing new, in Inngest and in the
 * embedded runner alike). Functions trigger on these types, so their `event.data` is typed;
 * `lib/` builds events only through the helpers below and never imports a function definition.
 */

const intentData = z.object({ intentId: z.string() });

/** A pending intent's user operation is to be landed, then confirmed (inngest/functions/relay.ts). */
export const relayRequested = eventType("transaction_intent/relay", { schema: intentData });

/** A sponsored intent awaits its owner's signature: cancelled when its sponsorship ends (functions/expire.ts). */
export const expiryScheduled = eventType("transaction_intent/expire", { schema: intentData });

/**
 * One published event (an `outbound_events` row) is to be delivered to one target: the project
 * webhook of its mode ("webhook") or a subscription's trigger (`tri_`). functions/deliver.ts.
 */
export const deliveryRequested = eventType("event/deliver", {
  schema: z.object({ messageId: z.string(), target: z.string(), projectId: z.string() }),
});

/** An event published inside a transaction is to be fanned out to its targets once committed (functions/deliver.ts). */
export const fanOutRequested = eventType("event/fan-out", {
  schema: z.object({ messageId: z.string(), projectId: z.string() }),
});

export type ServiceEventType = typeof relayRequested | typeof expiryScheduled | typeof deliveryRequested | typeof fanOutRequested;

/** An event as the runner stores it and Inngest receives it: always with its deduplicating id. */
export interface ServiceEvent {
  name: ServiceEventType["name"];
  data: Record<string, unknown>;
  id: string;
}

export const relayEvent = (intentId: string) => ({ name: relayRequested.name, data: { intentId }, id: `relay:${intentId}` }) satisfies ServiceEvent;

export const expireEvent = (intentId: string) => ({ name: expiryScheduled.name, data: { intentId }, id: `expire:${intentId}` }) satisfies ServiceEvent;

export const deliveryEvent = (messageId: string, target: string, projectId: string) =>
  ({ name: deliveryRequested.name, data: { messageId, target, projectId }, id: `deliver:${messageId}:${target}` }) satisfies ServiceEvent;

export const fanOutEvent = (messageId: string, projectId: string) =>
  ({ name: fanOutRequested.name, data: { messageId, projectId }, id: `fan-out:${messageId}` }) satisfies ServiceEvent;
