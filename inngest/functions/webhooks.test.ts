import { InngestTestEngine, mockCtx } from "@inngest/test";
import Openfort from "@openfort/openfort-node";
import { asc, eq } from "drizzle-orm";
import { StepOpCode } from "inngest/types";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { getDb } from "@/lib/db/client";
import { webhookDeliveries } from "@/lib/db/schema";
import type { Topic } from "@/lib/webhooks/service";
import { webhookSignature } from "@/lib/webhooks/service";
import { call, newProject } from "@/test/api";
import { receiver, runInProcessOnly, sponsoredDeposits } from "@/test/relay-fixtures";
import { WEBHOOK_EVENT, deliverWebhook } from "./webhooks";

let key: string;
let projectId: string;
let intentId: string;
let hooks: Awaited<ReturnType<typeof receiver>>;
/** What the receiver answers next. */
let answer = 200;

const deliverEvent = (id: string, topic: Topic) => ({ name: WEBHOOK_EVENT, data: { intentId: id, topic }, id: `webhook:${id}:${topic}` });

const deliveries = async () =>
  (await getDb()).select().from(webhookDeliveries).where(eq(webhookDeliveries.projectId, projectId)).orderBy(asc(webhookDeliveries.createdAt));

beforeAll(async () => {
  // Nothing runs in-process: the intent stays pending and no other delivery reaches the receiver.
  await runInProcessOnly();
  const project = await newProject("webhook function");
  key = project.keys.test.secret;
  projectId = project.id;
  hooks = await receiver(() => ({ status: answer, body: answer === 200 ? "ok" : "receiver broke" }));
  await call("POST", "/v1/settings/webhook", { key, json: { url: `${hooks.url}/hooks` } });
  intentId = (await (await sponsoredDeposits(key)).intent()).id;
});
afterAll(() => hooks?.close());

describe("the webhook delivery function (deliver-webhook) under @inngest/test", () => {
  it("POSTs the intent's event to the project webhook, signed as the official SDK verifies, and records the delivery", async () => {
    const before = hooks.received.length;
    const t = new InngestTestEngine({ function: deliverWebhook, events: [deliverEvent(intentId, "transaction_intent.successful")] });
    const { result, error, ctx } = await t.execute();
    expect(error).toBeUndefined();
    expect(result).toEqual({ delivered: true });
    expect(ctx.step.run).toHaveBeenCalledTimes(1);
    expect(ctx.step.run).toHaveBeenCalledWith("post", expect.any(Function));

    const got = hooks.received.slice(before);
    expect(got).toHaveLength(1);
    const [request] = got;
    expect(request).toMatchObject({ method: "POST", path: "/hooks", headers: { "content-type": "application/json" } });
    const signature = String(request!.headers["openfort-signature"]);
    expect(signature).toBe(webhookSignature(key, request!.body));
    const event = await new Openfort(key, "http://127.0.0.1:1").constructWebhookEvent(request!.body, signature);
    expect(event).toMatchObject({ type: "transaction_intent.successful", date: expect.any(Number), data: { id: intentId, object: "transactionIntent" } });
    await expect(new Openfort(key, "http://127.0.0.1:1").constructWebhookEvent(request!.body.replace("successful", "failed"), signature)).rejects.toThrow(/signature/i);

    expect((await deliveries()).at(-1)).toMatchObject({ topic: "transaction_intent.successful", objectId: intentId, url: `${hooks.url}/hooks`, attempt: 1, status: "success", responseStatus: 200, error: null });
  });

  it("on a 500 from the receiver the step throws a retryable error and the failed attempt is recorded; the retry then delivers", async () => {
    const before = (await deliveries()).length;
    answer = 500;
    const t = new InngestTestEngine({ function: deliverWebhook, events: [deliverEvent(intentId, "transaction_intent.broadcast")] });
    const failed = await t.executeStep("post");
    expect(failed.result).toBeUndefined();
    // Only the origin: the path or query of a webhook URL may hold the receiver's token.
    expect(failed.error).toMatchObject({ message: expect.stringMatching(/^webhook http:\/\/127\.0\.0\.1:\d+ answered 500$/) });
    // StepError: Inngest retries the step (StepFailed would end the run).
    expect(failed.step.op).toBe(StepOpCode.StepError);
    const run = await t.execute();
    expect(run.result).toBeUndefined();
    expect(run.error).toMatchObject({ message: expect.stringMatching(/answered 500/) });
    expect((await deliveries()).slice(before)).toEqual([
      expect.objectContaining({ topic: "transaction_intent.broadcast", objectId: intentId, attempt: 1, status: "failed", responseStatus: 500, error: "answered 500" }),
      expect.objectContaining({ attempt: 1, status: "failed", responseStatus: 500 }),
    ]);

    // Inngest's retry is the next attempt of the same run: it is recorded as such.
    answer = 200;
    const retry = await t.clone({ transformCtx: (ctx) => ({ ...mockCtx(ctx), attempt: 1 }) }).execute();
    expect(retry.error).toBeUndefined();
    expect(retry.result).toEqual({ delivered: true });
    expect((await deliveries()).at(-1)).toMatchObject({ topic: "transaction_intent.broadcast", attempt: 2, status: "success", responseStatus: 200 });
  });

  it("a receiver that cannot be reached fails the step (retryable) too", async () => {
    await call("POST", "/v1/settings/webhook", { key, json: { url: "http://127.0.0.1:1/hooks" } });
    try {
      const { step, error } = await new InngestTestEngine({ function: deliverWebhook, events: [deliverEvent(intentId, "transaction_intent.failed")] }).executeStep("post");
      expect(step.op).toBe(StepOpCode.StepError);
      expect(error).toMatchObject({ message: expect.stringMatching(/could not connect/) });
      expect((await deliveries()).at(-1)).toMatchObject({ url: "http://127.0.0.1:1/hooks", status: "failed", responseStatus: null, error: expect.stringMatching(/could not connect/) });
    } finally {
      await call("POST", "/v1/settings/webhook", { key, json: { url: `${hooks.url}/hooks` } });
    }
  });

  it("posts nothing for an intent that does not exist, or when the project has no webhook any more", async () => {
    const before = hooks.received.length;
    const unknown = await new InngestTestEngine({ function: deliverWebhook, events: [deliverEvent("tin_00000000-0000-0000-0000-000000000000", "transaction_intent.successful")] }).execute();
    expect(unknown.result).toEqual({ delivered: false });
    await call("DELETE", "/v1/settings/webhook", { key });
    try {
      const removed = await new InngestTestEngine({ function: deliverWebhook, events: [deliverEvent(intentId, "transaction_intent.successful")] }).execute();
      expect(removed.result).toEqual({ delivered: false });
    } finally {
      await call("POST", "/v1/settings/webhook", { key, json: { url: `${hooks.url}/hooks` } });
    }
    expect(hooks.received.length).toBe(before);
  });
});
