import { InngestTestEngine } from "@inngest/test";
import { eq, sql } from "drizzle-orm";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { expiryJob } from "@/lib/jobs/messages";
import { functions } from "@/inngest/functions";
import { cancelUnsignedIntent } from "@/inngest/functions/expire";
import { startEmbeddedRunner } from "@/inngest/runner";
import { serviceDeployment } from "@/lib/chain/contracts";
import { getDb } from "@/lib/db/client";
import { outboundEvents, subscriptions, triggers } from "@/lib/db/schema";
import { fanOutStragglers, publish, publishIntentEvent } from "@/lib/deliveries/publish";
import { INTENT_TOPICS } from "@/lib/deliveries/topics";
import { call, newProject } from "./helpers/api";
import { subscribe, unfinishedDeliveries } from "./helpers/delivery-fixtures";
import { eventually, intentRow, receiver, sponsoredDeposits } from "./helpers/relay-fixtures";

let hooks: Awaited<ReturnType<typeof receiver>>;
const owner = privateKeyToAccount(generatePrivateKey());

/** What each path of the receiver got: "<type> <intent id>" per request. */
const at = (path: string) => hooks.received.filter((r) => r.path === path).map((r) => `${JSON.parse(r.body).type} ${JSON.parse(r.body).data.id}`);

beforeAll(async () => {
  await startEmbeddedRunner(await getDb(), functions, { pollMs: 50 });
  hooks = await receiver();
});
afterAll(() => hooks?.close());

describe("fan-out of intent events", () => {
  it("each topic reaches its own subscribers only, and the project webhook all four; later triggers get no old events, deleted subscriptions nothing more, other projects and modes nothing", async () => {
    const project = await newProject("fan-out");
    const other = await newProject("fan-out, another project");
    const key = project.keys.test.secret;
    const test = { projectId: project.id, livemode: false };
    await call("POST", "/v1/settings/webhook", { key, json: { url: `${hooks.url}/webhook` } });
    for (const topic of INTENT_TOPICS) await subscribe(test, topic, `${hooks.url}/topic/${topic}`);
    const deleted = await subscribe(test, "transaction_intent.successful", `${hooks.url}/deleted`);
    await subscribe({ projectId: project.id, livemode: true }, "transaction_intent.successful", `${hooks.url}/live`);
    await subscribe({ projectId: other.id, livemode: false }, "transaction_intent.successful", `${hooks.url}/other`);
    await subscribe({ projectId: other.id, livemode: false }, "transaction_intent.broadcast", `${hooks.url}/other`);
    const db = await getDb();

    // A sponsored intent lands: broadcast, then successful.
    const deposits = await sponsoredDeposits(key);
    const landed = await deposits.intent(1);
    await eventually("the first successful event", () => at(`/topic/transaction_intent.successful`).length === 1 && at("/deleted").length === 1, 30_000);

    // A subscription deleted (as the API does: soft) and a trigger added, both after that event.
    await db.update(subscriptions).set({ deletedAt: sql`now()` }).where(eq(subscriptions.id, deleted.subscriptionId));
    await subscribe(test, "transaction_intent.successful", `${hooks.url}/late`);

    // Another lands; a non-custodial one nobody signs is cancelled when its sponsorship ends; one fails.
    const second = await deposits.intent(1);
    const unsigned = await call("POST", "/v1/transaction_intents", {
      key,
      json: { chainId: 31337, policy: deposits.policy, externalOwnerAddress: owner.address, interactions: [{ contract: deposits.contract, functionName: "depositTo", functionArgs: [serviceDeployment().paymaster] }] },
    });
    expect(unsigned.status, JSON.stringify(unsigned.body)).toBe(200);
    const cancel = await new InngestTestEngine({ function: cancelUnsignedIntent, events: [expiryJob(unsigned.body.id, project.id)], steps: [{ id: "wait-for-signature", handler: () => null }] }).execute();
    expect(cancel.result).toEqual({ intentId: unsigned.body.id, cancelled: true });
    expect((await intentRow(unsigned.body.id)).status).toBe("cancelled");
    // A failure as the relay reports it (its notify step): the event the same code publishes.
    const failing = await call("POST", "/v1/transaction_intents", {
      key,
      json: { chainId: 31337, policy: deposits.policy, externalOwnerAddress: owner.address, interactions: [{ contract: deposits.contract, functionName: "depositTo", functionArgs: [serviceDeployment().paymaster] }] },
    });
    await publishIntentEvent(db, failing.body.id, "transaction_intent.failed");

    await eventually("the second successful event", () => at(`/topic/transaction_intent.successful`).length === 2, 30_000);
    const messages = await db.select().from(outboundEvents).where(eq(outboundEvents.projectId, project.id));
    const targetsOf = await db.select({ id: triggers.id }).from(triggers);
    await eventually("every delivery ended", async () => (await unfinishedDeliveries(messages.flatMap((m) => [[m.id, "webhook"] as [string, string], ...targetsOf.map((t) => [m.id, t.id] as [string, string])]))).length === 0, 30_000);

    // Each topic's trigger got its topic's events only, each once.
    expect(at("/topic/transaction_intent.broadcast").sort()).toEqual([`transaction_intent.broadcast ${landed.id}`, `transaction_intent.broadcast ${second.id}`].sort());
    expect(at("/topic/transaction_intent.successful").sort()).toEqual([`transaction_intent.successful ${landed.id}`, `transaction_intent.successful ${second.id}`].sort());
    expect(at("/topic/transaction_intent.cancelled")).toEqual([`transaction_intent.cancelled ${unsigned.body.id}`]);
    expect(at("/topic/transaction_intent.failed")).toEqual([`transaction_intent.failed ${failing.body.id}`]);
    // The project webhook gets every intent event of its mode.
    expect(at("/webhook").sort()).toEqual(
      [
        `transaction_intent.broadcast ${landed.id}`,
        `transaction_intent.successful ${landed.id}`,
        `transaction_intent.broadcast ${second.id}`,
        `transaction_intent.successful ${second.id}`,
        `transaction_intent.cancelled ${unsigned.body.id}`,
        `transaction_intent.failed ${failing.body.id}`,
      ].sort(),
    );
    expect(messages).toHaveLength(6);
    // Deleted after the first event: that one only. Added after it: the second only.
    expect(at("/deleted")).toEqual([`transaction_intent.successful ${landed.id}`]);
    expect(at("/late")).toEqual([`transaction_intent.successful ${second.id}`]);
    // The live mode's subscription and the other project's: nothing.
    expect(at("/live")).toEqual([]);
    expect(at("/other")).toEqual([]);
  }, 90_000);
});

describe("the minute sweep (fanOutStragglers)", () => {
  it("fans out, once, an event published but never fanned out (the process died between the two), to the triggers it had when it happened", async () => {
    const project = await newProject("stragglers");
    const ctx = { projectId: project.id, livemode: false };
    const db = await getDb();
    const early = await subscribe(ctx, "transaction_intent.broadcast", `${hooks.url}/straggler`);
    // The subscription is older than the event, which is older than the sweep's 30 s.
    await db.update(triggers).set({ createdAt: sql`now() - interval '10 minutes'` }).where(eq(triggers.id, early.triggerId));
    const intentId = `tin_${crypto.randomUUID()}`;
    const messageId = await publish(db, ctx, { topic: "transaction_intent.broadcast", objectId: intentId, data: { id: intentId }, requestId: null, dedupeKey: `${intentId}:broadcast` });
    await db.update(outboundEvents).set({ createdAt: sql`now() - interval '2 minutes'` }).where(eq(outboundEvents.id, messageId));
    // A trigger added after it happened, and an event too recent for the sweep (its own fan-out may be under way).
    await subscribe(ctx, "transaction_intent.broadcast", `${hooks.url}/straggler-late`);
    const recentId = `tin_${crypto.randomUUID()}`;
    const recent = await publish(db, ctx, { topic: "transaction_intent.broadcast", objectId: recentId, data: { id: recentId }, requestId: null, dedupeKey: `${recentId}:broadcast` });

    expect(await fanOutStragglers(db)).toBeGreaterThanOrEqual(1);
    await eventually("the straggler delivered", () => at("/straggler").length === 1);
    expect(at("/straggler")).toEqual([`transaction_intent.broadcast ${intentId}`]);
    // Swept once: a second sweep finds nothing more for it.
    const [row] = await db.select().from(outboundEvents).where(eq(outboundEvents.id, messageId));
    expect(row!.fannedOutAt).not.toBeNull();
    expect(await fanOutStragglers(db)).toBe(0);
    await eventually("its delivery ended", async () => (await unfinishedDeliveries([[messageId, early.triggerId]])).length === 0);
    await new Promise((r) => setTimeout(r, 500));
    expect(at("/straggler")).toHaveLength(1);
    expect(at("/straggler-late")).toEqual([]);
    const [fresh] = await db.select().from(outboundEvents).where(eq(outboundEvents.id, recent));
    expect(fresh!.fannedOutAt).toBeNull();
  });
});
