import { eventType } from "inngest";
import { z } from "zod";

/**
 * Every job the service queues, declared once: its name, its data (a zod schema, which Inngest v4
 * takes as the event type's schema: the successor of v3's EventSchemas) and the id that
 * deduplicates it (a second send with the same id starts nothing new, in Inngest and in the
 * embedded runner alike). Inngest calls these messages events; here they are jobs, apart from the
 * events a project is sent (lib/deliveries). Functions trigger on these types, so their
 * `event.data` is typed; `lib/` builds jobs only through the helpers below and sends them through
 * ./port.ts, never importing a function definition.
 */

/**
 * A job about a project names it: the embedded runner shares its slots by `projectId` (inngest/runner.ts), and each
 * project's intents take turns in the relay's batches. Optional: jobs queued before every one carried it have none
 * (each such run is then its own share).
 */
const intentData = z.object({ intentId: z.string(), projectId: z.string().optional() });

/** A pending intent's user operation is to be landed, then confirmed: in a batch with others (inngest/functions/relay.ts, relayIntents). */
export const relayRequested = eventType("transaction_intent/relay", { schema: intentData });

/** An intent whose op did not land in its batch's bundle is relayed on its own (relayIntent: holds, rebuilds, retries). */
export const relayAloneRequested = eventType("transaction_intent/relay-alone", { schema: intentData });

/** A sponsored intent awaits its owner's signature: cancelled when its sponsorship ends (functions/expire.ts). */
export const expiryScheduled = eventType("transaction_intent/expire", { schema: intentData });

/**
 * One published event (an `outbound_events` row) is to be delivered to one target: the project
 * webhook of its mode ("webhook") or a subscription's trigger (`tri_`). functions/deliver.ts.
 */
export const deliveryRequested = eventType("event/deliver", {
  schema: z.object({ messageId: z.string(), target: z.string(), projectId: z.string() }),
});

export type JobType = typeof relayRequested | typeof relayAloneRequested | typeof expiryScheduled | typeof deliveryRequested;

/** A job as the runner stores it and Inngest receives it: always with its deduplicating id. */
export interface Job {
  name: JobType["name"];
  data: Record<string, unknown>;
  id: string;
}

/** The id of an intent's first relay job; a restart's is `relay:<id>:<n>`. */
export const relayJobId = (intentId: string) => `relay:${intentId}`;

export const relayJob = (intentId: string, projectId: string) => ({ name: relayRequested.name, data: { intentId, projectId }, id: relayJobId(intentId) }) satisfies Job;

/** One per relay job (`relay:<id>`, or a restart's `relay:<id>:<n>`): each restart of an intent's relay may go on alone once. */
export const relayAloneJobId = (relayJobId: string) => `relay-alone:${relayJobId}`;

/** `projectId` as the relay job had it (none, from a job queued before every one carried it). */
export const relayAloneJob = (intentId: string, projectId: string | undefined, fromJobId = relayJobId(intentId)) =>
  ({ name: relayAloneRequested.name, data: { intentId, ...(projectId && { projectId }) }, id: relayAloneJobId(fromJobId) }) satisfies Job;

/**
 * An intent whose landing's block left the chain (a reorg) is relayed again on its own: one job per intent and removed
 * block, whoever saw it first (the chain follower, or the relay's confirmation check).
 */
export const reorgRelayJob = (intentId: string, projectId: string, blockHash: string) => relayAloneJob(intentId, projectId, `${relayJobId(intentId)}:reorg:${blockHash.toLowerCase()}`);

/** An intent whose op was found on chain outside the relay (its owner's own handleOps, another bundler): its webhooks and confirmation, once. */
export const chainLandedJob = (intentId: string, projectId: string) => relayAloneJob(intentId, projectId, `${relayJobId(intentId)}:chain`);

export const expiryJob = (intentId: string, projectId: string) => ({ name: expiryScheduled.name, data: { intentId, projectId }, id: `expire:${intentId}` }) satisfies Job;

export const deliveryJob = (messageId: string, target: string, projectId: string) =>
  ({ name: deliveryRequested.name, data: { messageId, target, projectId }, id: `deliver:${messageId}:${target}` }) satisfies Job;
