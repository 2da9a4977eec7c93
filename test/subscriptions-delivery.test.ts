import Openfort from "@openfort/openfort-node";
import { eq, sql } from "drizzle-orm";
import { Webhook } from "standardwebhooks";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { functions } from "@/inngest/functions";
import { startEmbeddedRunner } from "@/inngest/runner";
import { serviceDeployment } from "@/lib/chain/contracts";
import { getDb } from "@/lib/db/client";
import { outboundEvents, triggers, webhookDeliveries } from "@/lib/db/schema";
import { attemptDelivery } from "@/lib/deliveries/attempt";
import { fanOutStragglers, publish } from "@/lib/deliveries/publish";
import type { ProjectWithKeys } from "@/lib/projects/service";
import { listDeliveries, sendTestEvent } from "@/lib/webhooks/service";
import { call, expectError, newProject } from "./helpers/api";
import { unfinishedDeliveries } from "./helpers/delivery-fixtures";
import { eventually, receiver, sponsoredDeposits, type ReceivedRequest } from "./helpers/relay-fixtures";

let hooks: Awaited<ReturnType<typeof receiver>>;
/** Paths answering 500 until the test "fixes" the receiver. */
const broken = new Set<string>();
const at = (path: string) => hooks.received.filter((r) => r.path === path);
const headersOf = (r: ReceivedRequest) => Object.fromEntries(Object.entries(r.headers).filter(([, v]) => typeof v === "string")) as Record<string, string>;

beforeAll(async () => {
  await startEmbeddedRunner(await getDb(), functions, { pollMs: 50 });
  hooks = await receiver((req) => (broken.has(req.path) ? { status: 500, body: "down for maintenance" } : { status: 200, body: "ok" }));
});
afterAll(() => hooks?.close());

async function subscribe(key: string, topic: string, path: string) {
  const res = await call("POST", "/v1/subscriptions", { key, json: { topic, triggers: [{ target: `${hooks.url}${path}`, type: "webhook" }] } });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return { id: res.body.id as string, trigger: res.body.triggers[0].id as string, secret: res.body.triggers[0].secret as string };
}

const logs = async (key: string, query: Record<string, unknown>) => (await call("GET", "/v1/subscriptions/logs", { key, query })).body;

describe("delivery to a subscription, end to end", () => {
  it("a sponsored intent reaches the trigger once, signed both ways, and its attempt is in the log by status, object and the request id the client saw", async () => {
    const project = await newProject("subscription delivery");
    const key = project.keys.test.secret;
    const sub = await subscribe(key, "transaction_intent.successful", "/successful");
    const deposits = await sponsoredDeposits(key);
    const created = await call("POST", "/v1/transaction_intents", {
      key,
      json: { chainId: 31337, policy: deposits.policy, confirmationBlocks: 1, interactions: [{ contract: deposits.contract, functionName: "depositTo", functionArgs: [serviceDeployment().paymaster] }] },
    });
    expect(created.status, JSON.stringify(created.body)).toBe(200);
    const intentId = created.body.id as string;
    const requestId = created.headers.get("x-request-id")!;
    expect(requestId).toMatch(/^req_/);

    const [delivery] = await eventually("the successful event", () => at("/successful").length > 0 && at("/successful"), 60_000);
    const messageId = delivery!.headers["webhook-id"] as string;
    await eventually("its delivery ended", async () => (await unfinishedDeliveries([[messageId, sub.trigger]])).length === 0, 30_000);
    expect(at("/successful")).toHaveLength(1);

    // openfort-signature: what the official SDK checks.
    const openfort = new Openfort(key, "http://127.0.0.1:1");
    const event = (await openfort.constructWebhookEvent(delivery!.body, delivery!.headers["openfort-signature"] as string)) as { type: string; data: { id: string } };
    expect(event).toMatchObject({ type: "transaction_intent.successful", data: { id: intentId } });
    // webhook-signature: Standard Webhooks, with the trigger's secret from the create answer.
    expect(new Webhook(sub.secret).verify(delivery!.body, headersOf(delivery!))).toMatchObject({ type: "transaction_intent.successful" });
    expect(() => new Webhook(sub.secret).verify(delivery!.body.replace(intentId, "tin_forged"), headersOf(delivery!))).toThrow();

    const expected = { object: "log", topic: "transaction_intent.successful", status: "success", subscription: sub.id, trigger: sub.trigger, requestID: requestId, event: messageId, relatedObject: intentId, attempt: 1, reason: "scheduled", responseStatus: 200 };
    for (const query of [{ status: "success" }, { object: intentId }, { requestID: requestId }, { subscription: sub.id, trigger: sub.trigger, topic: "transaction_intent.successful" }]) {
      const list = await logs(key, query);
      expect(list.total, JSON.stringify(query)).toBe(1);
      expect(list.data[0]).toMatchObject(expected);
      expect(list.data[0].id).toMatch(/^eve_/);
      expect(list.data[0].responseBody).toBeUndefined();
    }
    expect((await logs(key, { status: "failed" })).total).toBe(0);
    expect((await logs(key, { object: "tin_other" })).total).toBe(0);
    expect((await logs(key, { topic: "transaction_intent.broadcast" })).total).toBe(0);
    const one = await call("GET", `/v1/subscriptions/logs/${(await logs(key, {})).data[0].id}`, { key });
    expect(one.body).toMatchObject({ ...expected, responseBody: "ok" });
    // The other mode and other projects see none of it.
    expect((await logs(project.keys.live.secret, {})).total).toBe(0);
    expectError(await call("GET", `/v1/subscriptions/logs/${one.body.id}`, { key: project.keys.live.secret }), 404);
  }, 90_000);
});

describe("test sends, redelivery, re-enabling", () => {
  let project: ProjectWithKeys;
  let key: string;
  beforeAll(async () => {
    project = await newProject("subscription tests");
    key = project.keys.test.secret;
  });

  it("with no body goes to every enabled trigger on the test topic, with a subscription to its triggers, with a target to that URL only", async () => {
    const onTest = await subscribe(key, "test", "/on-test");
    const onIntents = await subscribe(key, "transaction_intent.failed", "/on-intents");

    const noBody = await call("POST", "/v1/subscriptions/test", { key });
    expect(noBody.status, JSON.stringify(noBody.body)).toBe(200);
    expect(noBody.body).toMatchObject({ sent: true, deliveries: [{ trigger: onTest.trigger, status: "success", responseStatus: 200, error: null }] });
    expect(noBody.body.deliveries).toHaveLength(1);
    const [got] = at("/on-test");
    expect(JSON.parse(got!.body)).toMatchObject({ type: "test", data: { object: "event" } });
    new Webhook(onTest.secret).verify(got!.body, headersOf(got!));
    expect(at("/on-intents")).toHaveLength(0);

    const bySubscription = await call("POST", "/v1/subscriptions/test", { key, form: { subscription: onIntents.id } });
    expect(bySubscription.body).toMatchObject({ sent: true, deliveries: [{ trigger: onIntents.trigger, status: "success" }] });
    new Webhook(onIntents.secret).verify(at("/on-intents")[0]!.body, headersOf(at("/on-intents")[0]!));

    const byTarget = await call("POST", "/v1/subscriptions/test", { key, json: { target: `${hooks.url}/ad-hoc` } });
    expect(byTarget.body).toMatchObject({ sent: true, deliveries: [{ trigger: null, status: "success" }] });
    const adHoc = at("/ad-hoc")[0]!;
    // Not saved anywhere, so no whsec_ secret to sign with; the SDK's signature is there.
    expect(adHoc.headers["webhook-signature"]).toBeUndefined();
    expect(adHoc.headers["openfort-signature"]).toMatch(/^[0-9a-f]{64}$/);
    expect(at("/on-test")).toHaveLength(1);

    // Logged with reason test; the request's id is the log's requestID.
    const testLogs = await logs(key, { topic: "test" });
    expect(testLogs.total).toBe(3);
    expect(testLogs.data.every((l: { reason: string; status: string }) => l.reason === "test" && l.status === "success")).toBe(true);
    const byRequest = await logs(key, { requestID: byTarget.headers.get("x-request-id") });
    expect(byRequest.data.map((l: { url: string }) => l.url)).toEqual([`${hooks.url}/ad-hoc`]);

    // The dashboard's test of the project webhook goes there only; its attempts list leaves out
    // the test to a bare URL, which was not the webhook's.
    expect((await call("POST", "/v1/settings/webhook", { key, json: { url: `${hooks.url}/project-hook` } })).status).toBe(200);
    const dashboardTest = await sendTestEvent(await getDb(), { projectId: project.id, livemode: false });
    expect(dashboardTest).toMatchObject({ status: "success", url: `${hooks.url}/project-hook` });
    // Redelivered to the webhook as it is now: same webhook-id, signed with its whsec_ secret too.
    expect((await call("POST", `/v1/subscriptions/logs/${dashboardTest!.id}/redeliver`, { key })).body).toMatchObject({ status: "success", subscription: null, trigger: null, attempt: 2 });
    const [first, again] = at("/project-hook");
    expect(again!.headers["webhook-id"]).toBe(first!.headers["webhook-id"]);
    expect(again!.headers["webhook-signature"]).toMatch(/^v1,/);
    const webhookAttempts = await listDeliveries(await getDb(), { projectId: project.id, livemode: false }, { limit: 10, skip: 0 });
    expect(webhookAttempts.rows.map((a) => a.url)).toEqual([`${hooks.url}/project-hook`, `${hooks.url}/project-hook`]);

    // The minute sweep does not send test events again to the test topic's subscribers.
    await fanOutStragglers(await getDb(), 0);
    await new Promise((r) => setTimeout(r, 1500)); // the runner polls every 50 ms
    expect(at("/on-test")).toHaveLength(1);

    // Bad requests.
    expectError(await call("POST", "/v1/subscriptions/test", { key, json: { subscription: "sub_missing" } }), 400);
    expectError(await call("POST", "/v1/subscriptions/test", { key, json: { subscription: onTest.id, target: `${hooks.url}/x` } }), 400);
    expect(expectError(await call("POST", "/v1/subscriptions/test", { key, json: { target: "ftp://x" } }), 400).details?.target).toBeDefined();
    expect(expectError(await call("POST", "/v1/subscriptions/test", { key: project.keys.live.secret, json: { target: `${hooks.url}/x` } }), 400).details?.target).toBeDefined();
    // The other mode has nothing to send to.
    expect((await call("POST", "/v1/subscriptions/test", { key: project.keys.live.secret })).body).toEqual({ sent: false, deliveries: [] });
  });

  it("a failing target gives sent:false and a failed log entry; fixed, a redelivery succeeds with the same webhook-id; a disabled trigger is skipped until enabled", async () => {
    const flaky = await subscribe(key, "balance.project", "/flaky");
    broken.add("/flaky");
    const failed = await call("POST", "/v1/subscriptions/test", { key, json: { subscription: flaky.id } });
    expect(failed.body).toMatchObject({ sent: false, deliveries: [{ trigger: flaky.trigger, status: "failed", responseStatus: 500, error: "answered 500" }] });
    const entry = await call("GET", `/v1/subscriptions/logs/${failed.body.deliveries[0].id}`, { key });
    expect(entry.body).toMatchObject({ status: "failed", trigger: flaky.trigger, subscription: flaky.id, attempt: 1, reason: "test", responseStatus: 500, responseBody: "down for maintenance" });
    expect((await logs(key, { status: "failed", trigger: flaky.trigger })).total).toBe(1);
    const failedAttempt = at("/flaky")[0]!;

    broken.delete("/flaky");
    const redelivered = await call("POST", `/v1/subscriptions/logs/${entry.body.id}/redeliver`, { key });
    expect(redelivered.status, JSON.stringify(redelivered.body)).toBe(200);
    expect(redelivered.body).toMatchObject({ status: "success", trigger: flaky.trigger, event: entry.body.event, attempt: 2, reason: "redelivery", responseStatus: 200 });
    expect(redelivered.body.id).not.toBe(entry.body.id);
    const second = at("/flaky")[1]!;
    expect(second.headers["webhook-id"]).toBe(failedAttempt.headers["webhook-id"]);
    expect(second.body).toBe(failedAttempt.body);
    new Webhook(flaky.secret).verify(second.body, headersOf(second));

    // A redelivery of a deleted trigger's entry has nowhere to go.
    await call("DELETE", `/v1/subscriptions/${flaky.id}/triggers/${flaky.trigger}`, { key });
    expectError(await call("POST", `/v1/subscriptions/logs/${entry.body.id}/redeliver`, { key }), 409);

    // The project webhook's attempts are in the log too (no subscription, no trigger), and redeliverable.
    broken.add("/project-webhook");
    await call("POST", "/v1/settings/webhook", { key, json: { url: `${hooks.url}/project-webhook` } });
    const messageId = await publish(await getDb(), { projectId: project.id, livemode: false }, { topic: "transaction_intent.failed", objectId: "tin_x", data: { id: "tin_x" }, requestId: null, dedupeKey: "tin_x:failed" });
    const first = await attemptDelivery(await getDb(), { messageId, target: "webhook", attempt: 1, reason: "scheduled" });
    expect(first.outcome).toBe("failed");
    const webhookLog = (await logs(key, { object: "tin_x" })).data;
    expect(webhookLog).toMatchObject([{ id: first.attemptId, subscription: null, trigger: null, status: "failed", url: `${hooks.url}/project-webhook` }]);
    broken.delete("/project-webhook");
    const again = await call("POST", `/v1/subscriptions/logs/${first.attemptId}/redeliver`, { key });
    expect(again.body).toMatchObject({ status: "success", trigger: null, event: messageId, attempt: 2, reason: "redelivery" });
    expect(at("/project-webhook").map((r) => r.headers["webhook-id"])).toEqual([messageId, messageId]);

    // A log row from before events were stored (no message) cannot be redelivered.
    const db = await getDb();
    await db.insert(webhookDeliveries).values({ id: "whd_old", projectId: project.id, livemode: false, target: "webhook", topic: "transaction_intent.successful", url: `${hooks.url}/old`, attempt: 1, status: "failed", durationMs: 3 });
    expect(expectError(await call("POST", "/v1/subscriptions/logs/whd_old/redeliver", { key }), 409).message).toMatch(/cannot be sent again/);
    expect((await call("GET", "/v1/subscriptions/logs/whd_old", { key })).body).toMatchObject({ id: "whd_old", event: null, subscription: null });

    // Disabled (as three days of failures leave it): the no-body test skips it; enabled, it gets one again.
    const onTest = (await call("GET", "/v1/subscriptions", { key, query: { topic: "test" } })).body.data[0];
    await db.update(triggers).set({ disabledAt: sql`now()`, disabledReason: "every delivery failed for 3 days", failingSince: sql`now() - interval '3 days'` }).where(eq(triggers.id, onTest.triggers[0].id));
    expect((await call("GET", `/v1/subscriptions/${onTest.id}`, { key })).body.triggers[0]).toMatchObject({ status: "disabled" });
    expect((await call("POST", "/v1/subscriptions/test", { key })).body).toEqual({ sent: false, deliveries: [] });
    const enabled = await call("POST", `/v1/subscriptions/${onTest.id}/triggers/${onTest.triggers[0].id}/enable`, { key });
    expect(enabled.body).toMatchObject({ status: "enabled", disabledAt: null, failingSince: null });
    expect((await call("POST", "/v1/subscriptions/test", { key })).body).toMatchObject({ sent: true, deliveries: [{ trigger: onTest.triggers[0].id }] });
    // Every test event was marked as fanned out: none is left for the sweep.
    const unfanned = await db.select().from(outboundEvents).where(eq(outboundEvents.projectId, project.id));
    expect(unfanned.filter((m) => m.topic === "test" && !m.fannedOutAt)).toEqual([]);
  });
});
