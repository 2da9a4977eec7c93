import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { functions } from "@/inngest/functions";
import { startEmbeddedRunner } from "@/inngest/runner";
import { getDb } from "@/lib/db/client";
import { attemptDelivery } from "@/lib/deliveries/attempt";
import { fanOut, publish } from "@/lib/deliveries/publish";
import { newProject } from "./helpers/api";
import { attemptsOf, deliveryRun, subscribe, triggerRow } from "./helpers/delivery-fixtures";
import { eventually, receiver } from "./helpers/relay-fixtures";

/** "Three days", scaled: a trigger failing for 3 s in a row is disabled; attempts a second apart meanwhile. */
const DISABLE_AFTER_MS = 3_000;

let ctx: { projectId: string; livemode: boolean };
let hooks: Awaited<ReturnType<typeof receiver>>;
/** What each path answers; 200 when unset. */
const answers: Record<string, number> = {};

/** A published event about a made-up intent, fanned out as the relay's notify step does. */
async function happen(): Promise<{ messageId: string; targets: number }> {
  const db = await getDb();
  const id = `tin_${crypto.randomUUID()}`;
  const topic = "transaction_intent.successful";
  const messageId = await publish(db, ctx, { topic, objectId: id, data: { id, object: "transactionIntent" }, requestId: null, dedupeKey: `${id}:${topic}` });
  return { messageId, targets: await fanOut(db, messageId) };
}

beforeAll(async () => {
  vi.stubEnv("WEBHOOK_RETRY_SCHEDULE", Array.from({ length: 12 }, () => "1s").join(","));
  vi.stubEnv("TRIGGER_DISABLE_AFTER", `${DISABLE_AFTER_MS / 1000}s`);
  await startEmbeddedRunner(await getDb(), functions, { pollMs: 50 });
  const project = await newProject("failing triggers");
  ctx = { projectId: project.id, livemode: false };
  hooks = await receiver((req) => ({ status: answers[req.path] ?? 200 }));
});
afterAll(async () => {
  vi.unstubAllEnvs();
  await hooks?.close();
});

describe("a trigger whose receiver keeps failing", () => {
  it("is disabled with a reason once every attempt failed for the disable period; its run stops, later events skip it, and a redelivery that succeeds re-enables it", async () => {
    answers["/a"] = 500;
    const { triggerId } = await subscribe(ctx, "transaction_intent.successful", `${hooks.url}/a`);
    const first = await happen();
    expect(first.targets).toBe(1);

    const disabled = await eventually("the trigger disabled", async () => {
      const row = await triggerRow(triggerId);
      return row.disabledAt !== null && row;
    }, 20_000);
    expect(disabled.disabledReason).toMatch(/^every delivery failed for [\d.]+ seconds$/);
    expect(disabled.failingSince).not.toBeNull();
    expect(disabled.disabledAt!.getTime() - disabled.failingSince!.getTime()).toBeGreaterThanOrEqual(DISABLE_AFTER_MS);

    // The run ends on the disabling attempt; nothing more is tried while disabled.
    const run = await eventually("the delivery run ended", async () => {
      const row = await deliveryRun(first.messageId, triggerId);
      return row?.status === "completed" && row;
    });
    const tried = await attemptsOf(first.messageId);
    expect(run.output).toMatchObject({ outcome: "failed", disabled: true, attempts: tried.length });
    expect(tried.every((a) => a.status === "failed" && a.responseStatus === 500 && a.reason === "scheduled" && a.triggerId === triggerId)).toBe(true);
    // Attempts a second apart for three seconds: the fourth or fifth one disables it.
    expect(tried.length).toBeGreaterThanOrEqual(4);
    expect(tried.length).toBeLessThanOrEqual(6);
    await new Promise((r) => setTimeout(r, 2_500));
    expect(await attemptsOf(first.messageId)).toHaveLength(tried.length);

    // A later event is not fanned out to it (no run, nothing sent).
    const received = hooks.received.length;
    const later = await happen();
    expect(later.targets).toBe(0);
    expect(await deliveryRun(later.messageId, triggerId)).toBeUndefined();

    // The receiver is fixed; a redelivery from the dashboard goes to the disabled trigger and re-enables it.
    answers["/a"] = 200;
    const redelivery = await attemptDelivery(await getDb(), { messageId: first.messageId, target: triggerId, attempt: tried.length + 1, reason: "redelivery" });
    expect(redelivery).toMatchObject({ outcome: "delivered", responseStatus: 200 });
    expect(await triggerRow(triggerId)).toMatchObject({ disabledAt: null, disabledReason: null, failingSince: null });
    expect((await attemptsOf(first.messageId)).at(-1)).toMatchObject({ reason: "redelivery", status: "success", attempt: tried.length + 1 });
    expect(hooks.received.length).toBe(received + 1);

    // Enabled again: new events reach it.
    const after = await happen();
    expect(after.targets).toBe(1);
    await eventually("the next event delivered", async () => (await attemptsOf(after.messageId)).some((a) => a.status === "success"));
  }, 60_000);

  it("starts a new run of failures after a success: failing, succeeding, then failing again is not disabled early", async () => {
    answers["/b"] = 500;
    const { triggerId } = await subscribe(ctx, "transaction_intent.successful", `${hooks.url}/b`);
    const first = await happen();
    await eventually("two failed attempts", async () => (await attemptsOf(first.messageId, triggerId)).length >= 2);
    const firstFailure = (await attemptsOf(first.messageId, triggerId))[0]!.createdAt.getTime();
    answers["/b"] = 200;
    await eventually("delivered on a retry", async () => (await attemptsOf(first.messageId, triggerId)).some((a) => a.status === "success"));
    // The success's attempt row is written before the trigger's health: wait for the latter.
    await eventually("the run of failures ended", async () => (await triggerRow(triggerId)).failingSince === null);

    // Failing again, more than the disable period after the first failure: a new run, counted from now.
    answers["/b"] = 500;
    await new Promise((r) => setTimeout(r, Math.max(0, firstFailure + DISABLE_AFTER_MS + 200 - Date.now())));
    const second = await happen();
    await eventually("two failed attempts of the next event", async () => (await attemptsOf(second.messageId, triggerId)).length >= 2);
    const row = await triggerRow(triggerId);
    const secondFailure = (await attemptsOf(second.messageId, triggerId))[0]!.createdAt.getTime();
    expect(row.disabledAt).toBeNull();
    expect(row.failingSince!.getTime()).toBeGreaterThanOrEqual(secondFailure - 1_000);

    // Its own three seconds later it is disabled after all.
    const disabled = await eventually("disabled after its own run", async () => {
      const r = await triggerRow(triggerId);
      return r.disabledAt !== null && r;
    }, 20_000);
    expect(disabled.disabledAt!.getTime() - secondFailure).toBeGreaterThanOrEqual(DISABLE_AFTER_MS - 50);
  }, 60_000);

  it("counts only scheduled attempts: a test or redelivery that failed long before does not have the next event's first failure disable it", async () => {
    answers["/c"] = 503;
    // An event from before the trigger: the trigger gets it only from the dashboard's test or redeliver.
    const earlier = await happen();
    const { triggerId } = await subscribe(ctx, "transaction_intent.successful", `${hooks.url}/c`);
    const db = await getDb();
    expect(await attemptDelivery(db, { messageId: earlier.messageId, target: triggerId, attempt: 90, reason: "test" })).toMatchObject({ outcome: "failed", responseStatus: 503 });
    expect(await attemptDelivery(db, { messageId: earlier.messageId, target: triggerId, attempt: 91, reason: "redelivery" })).toMatchObject({ outcome: "failed", responseStatus: 503 });
    expect((await triggerRow(triggerId)).failingSince).toBeNull();
    // Longer ago than the disable period, the next event's scheduled attempts fail: a run starting now.
    await new Promise((r) => setTimeout(r, DISABLE_AFTER_MS + 200));
    const next = await happen();
    await eventually("a scheduled failure of the next event", async () => (await attemptsOf(next.messageId, triggerId)).length >= 1);
    // The attempt's row is written before the trigger's health: wait for the latter.
    const row = await eventually("the run of failures started", async () => {
      const r = await triggerRow(triggerId);
      return r.failingSince !== null && r;
    });
    expect(row.disabledAt).toBeNull();
    answers["/c"] = 200;
    await eventually("delivered on a retry", async () => (await attemptsOf(next.messageId, triggerId)).some((a) => a.status === "success"));
    const healthy = await eventually("the run of failures ended", async () => {
      const r = await triggerRow(triggerId);
      return r.failingSince === null && r;
    });
    expect(healthy.disabledAt).toBeNull();
  }, 60_000);
});
