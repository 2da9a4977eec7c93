import { InngestTestEngine } from "@inngest/test";
import Openfort from "@openfort/openfort-node";
import { asc, eq } from "drizzle-orm";
import { Webhook } from "standardwebhooks";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { getDb } from "@/lib/db/client";
import { webhookDeliveries } from "@/lib/db/schema";
import { publish } from "@/lib/deliveries/publish";
import { webhookSignature } from "@/lib/deliveries/signing";
import { call, newProject } from "@/test/helpers/api";
import { receiver, runInProcessOnly } from "@/test/helpers/relay-fixtures";
import { deliveryJob } from "@/lib/jobs/messages";
import { deliverEvent } from "./deliver";

let key: string;
let projectId: string;
let secret: string;
let hooks: Awaited<ReturnType<typeof receiver>>;
/** What the receiver answers next, in turn (then 200). */
let answers: number[] = [];

const deliveries = async () =>
  (await getDb()).select().from(webhookDeliveries).where(eq(webhookDeliveries.projectId, projectId)).orderBy(asc(webhookDeliveries.createdAt));

/** A published event (not fanned out: the test delivers it itself). */
const message = async (topic: "transaction_intent.successful" | "transaction_intent.broadcast" = "transaction_intent.successful") => {
  const id = `tin_${crypto.randomUUID()}`;
  return publish(await getDb(), { projectId, livemode: false }, { topic, objectId: id, data: { id, object: "transactionIntent" }, requestId: "req_test", dedupeKey: `${id}:${topic}` });
};

/** Sleeps between attempts, mocked so the test does not wait. */
const noSleeps = (n: number) => Array.from({ length: n }, (_, i) => ({ id: `retry-${i + 1}`, handler: () => null }));

beforeAll(async () => {
  // Nothing runs in-process: the test runs the function itself.
  await runInProcessOnly();
  const project = await newProject("delivery function");
  key = project.keys.test.secret;
  projectId = project.id;
  hooks = await receiver(() => ({ status: answers.shift() ?? 200, body: "receiver says hi" }));
  const set = await call("POST", "/v1/settings/webhook", { key, json: { url: `${hooks.url}/hooks` } });
  secret = set.body.secret;
  expect(secret).toMatch(/^whsec_/);
});
afterAll(() => hooks?.close());
afterEach(() => {
  answers = [];
  vi.unstubAllEnvs();
});

describe("the delivery function (deliver-event) under @inngest/test", () => {
  it("POSTs the event once, signed for the official SDK and for Standard Webhooks receivers, and logs the attempt", async () => {
    const messageId = await message();
    const before = hooks.received.length;
    const { result, error } = await new InngestTestEngine({ function: deliverEvent, events: [deliveryJob(messageId, "webhook", projectId)] }).execute();
    expect(error).toBeUndefined();
    expect(result).toEqual({ messageId, target: "webhook", attempts: 1, outcome: "delivered", disabled: false });
    const [request] = hooks.received.slice(before);
    expect(hooks.received.length - before).toBe(1);
    expect(request).toMatchObject({ method: "POST", path: "/hooks", headers: { "content-type": "application/json", "webhook-id": messageId } });
    const signature = String(request!.headers["openfort-signature"]);
    expect(signature).toBe(webhookSignature(key, request!.body));
    await expect(new Openfort(key, "http://127.0.0.1:1").constructWebhookEvent(request!.body, signature)).resolves.toMatchObject({ type: "transaction_intent.successful", data: { object: "transactionIntent" } });
    // The official Standard Webhooks library verifies id, timestamp and body together.
    const headers = { "webhook-id": String(request!.headers["webhook-id"]), "webhook-timestamp": String(request!.headers["webhook-timestamp"]), "webhook-signature": String(request!.headers["webhook-signature"]) };
    expect(new Webhook(secret).verify(request!.body, headers)).toMatchObject({ type: "transaction_intent.successful" });
    expect(() => new Webhook(secret).verify(request!.body.replace("successful", "failed"), headers)).toThrow();
    expect(() => new Webhook(secret).verify(request!.body, { ...headers, "webhook-timestamp": String(Number(headers["webhook-timestamp"]) - 3600) })).toThrow(/timestamp/i);
    expect((await deliveries()).at(-1)).toMatchObject({ id: expect.stringMatching(/^eve_/), messageId, topic: "transaction_intent.successful", requestId: "req_test", attempt: 1, reason: "scheduled", status: "success", responseStatus: 200, responseBody: "receiver says hi", error: null });
  });

  it("retries a failed attempt after the schedule's wait with the same webhook-id and body, logging each attempt", async () => {
    const messageId = await message("transaction_intent.broadcast");
    answers = [500, 503];
    const before = hooks.received.length;
    const t = new InngestTestEngine({ function: deliverEvent, events: [deliveryJob(messageId, "webhook", projectId)], steps: noSleeps(5) });
    const { result, ctx } = await t.execute();
    expect(result).toMatchObject({ attempts: 3, outcome: "delivered" });
    expect((ctx.step.sleep as unknown as { mock: { calls: unknown[][] } }).mock.calls).toEqual([
      ["retry-1", "5s"],
      ["retry-2", "1m"],
    ]);
    const got = hooks.received.slice(before);
    expect(got.map((r) => r.headers["webhook-id"])).toEqual([messageId, messageId, messageId]);
    expect(new Set(got.map((r) => r.body)).size).toBe(1);
    expect((await deliveries()).filter((d) => d.messageId === messageId).map((d) => [d.attempt, d.status, d.responseStatus])).toEqual([
      [1, "failed", 500],
      [2, "failed", 503],
      [3, "success", 200],
    ]);
  });

  it("gives up when the schedule ends (WEBHOOK_RETRY_SCHEDULE), every attempt logged", async () => {
    vi.stubEnv("WEBHOOK_RETRY_SCHEDULE", "1s,2s");
    const messageId = await message();
    answers = [500, 500, 500, 500];
    const { result } = await new InngestTestEngine({ function: deliverEvent, events: [deliveryJob(messageId, "webhook", projectId)], steps: noSleeps(3) }).execute();
    expect(result).toMatchObject({ attempts: 3, outcome: "failed" });
    expect((await deliveries()).filter((d) => d.messageId === messageId).map((d) => d.error)).toEqual(["answered 500", "answered 500", "answered 500"]);
  });

  it("sends nothing for an event that does not exist, or once the webhook is removed", async () => {
    const before = hooks.received.length;
    const unknown = await new InngestTestEngine({ function: deliverEvent, events: [deliveryJob("msg_00000000-0000-0000-0000-000000000000", "webhook", projectId)] }).execute();
    expect(unknown.result).toMatchObject({ attempts: 1, outcome: "gone" });
    const messageId = await message();
    await call("DELETE", "/v1/settings/webhook", { key });
    try {
      const removed = await new InngestTestEngine({ function: deliverEvent, events: [deliveryJob(messageId, "webhook", projectId)] }).execute();
      expect(removed.result).toMatchObject({ outcome: "gone" });
    } finally {
      const again = await call("POST", "/v1/settings/webhook", { key, json: { url: `${hooks.url}/hooks` } });
      secret = again.body.secret ?? secret;
    }
    expect(hooks.received.length).toBe(before);
  });
});
