import { InngestTestEngine } from "@inngest/test";
import Openfort from "@openfort/openfort-node";
import type { Hex } from "viem";
import { and, eq, inArray } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { getDb } from "@/lib/db/client";
import { sponsorshipEntries, sponsorshipHolds, transactionIntents } from "@/lib/db/schema";
import { enqueue } from "@/lib/chain/relayer";
import { executorAddresses } from "@/lib/chain/relayer/testing";
import { deserializeUserOp } from "@/lib/intent-records/userop-json";
import { call, newProject } from "@/test/helpers/api";
import { chainOf, clientOf, userOperationEvents } from "@/test/helpers/chain";
import { eventually, intentRow, receiver, runInProcessOnly, sponsoredDeposits } from "@/test/helpers/relay-fixtures";
import { relayAloneJob, relayJob } from "@/lib/jobs/messages";
import { relayIntent, relayIntents } from "./relay";
import { deliverEvent } from "./deliver";

let key: string;
let projectId: string;
let deposits: Awaited<ReturnType<typeof sponsoredDeposits>>;
let hooks: Awaited<ReturnType<typeof receiver>>;

/**
 * step.sleep, mocked so the test does not wait: each sleep mines a block instead, as a real sleep
 * would let the chain advance. Sleeps past `blocks` should never happen; they also wait a little,
 * so a check that keeps saying no ends the run (to fail the assertions) instead of exhausting the mocks.
 */
const sleepsMining = (blocks: number) =>
  Array.from({ length: blocks + 30 }, (_, i) => ({
    id: `wait-for-blocks-${i}`,
    handler: async () => {
      await clientOf(31337).request({ method: "anvil_mine" as never, params: ["0x1"] as never });
      if (i >= blocks) await new Promise((r) => setTimeout(r, 200));
      return null;
    },
  }));

/** A step's stored result, handed back to the resumed run as Inngest does: what the step returned when it ran. */
const stored = (id: string, data: unknown) => ({ id, handler: () => data });

type Spied = { mock: { calls: unknown[][] } };
const calledIds = (spy: unknown) => (spy as Spied).mock.calls.map((c) => c[0]);

const webhooksFor = (intentId: string) =>
  hooks.received.filter((r) => JSON.parse(r.body).data.id === intentId).map((r) => ({ ...JSON.parse(r.body), signature: r.headers["openfort-signature"], body: r.body }));

/** The webhook as the official SDK parses it: it throws unless the openfort-signature header matches. */
const verified = (hook: { body: string; signature: unknown }) => new Openfort(key, "http://127.0.0.1:1").constructWebhookEvent(hook.body, String(hook.signature));

beforeAll(async () => {
  // The webhook deliveries the relay queues run in-process, to a real receiver; the relay itself runs here.
  await runInProcessOnly([deliverEvent]);
  const project = await newProject("relay function");
  key = project.keys.test.secret;
  projectId = project.id;
  deposits = await sponsoredDeposits(key);
  hooks = await receiver();
  await call("POST", "/v1/settings/webhook", { key, json: { url: `${hooks.url}/hooks` } });
});
afterAll(() => hooks?.close());

describe("the relay of one intent (relay-transaction-intent, for an op that did not land in its batch) under @inngest/test", () => {
  it("lands a sponsored custodial intent created through the API, notifies broadcast, waits for its confirmation blocks, then notifies successful", async () => {
    const confirmationBlocks = 2;
    const intent = await deposits.intent(confirmationBlocks);
    expect(await intentRow(intent.id)).toMatchObject({ status: "pending", response: null, transactionHash: null });
    const t = new InngestTestEngine({ function: relayIntent, events: [relayAloneJob(intent.id, projectId)] });

    // land: the op is on chain once, and recorded; not confirmed yet, nothing notified yet.
    const land = await t.executeStep("land");
    expect(land.error).toBeUndefined();
    expect(land.result).toBe("landed");
    const landed = await intentRow(intent.id);
    expect(landed).toMatchObject({ status: "successful", confirmedAt: null, response: { status: 1, transactionHash: landed.transactionHash, blockNumber: landed.blockNumber } });
    expect((await clientOf(31337).getTransactionReceipt({ hash: landed.transactionHash as Hex })).status).toBe("success");
    expect(await userOperationEvents(intent.userOperationHash)).toHaveLength(1);
    expect(webhooksFor(intent.id)).toEqual([]);

    // notify-broadcast, the run resumed with land's stored result: the broadcast webhook goes out.
    const broadcast = await t.executeStep("notify-broadcast", { steps: [stored("land", land.result)] });
    expect(broadcast.result).toBe(true);
    const [first] = await eventually("the broadcast webhook", () => webhooksFor(intent.id).length > 0 && webhooksFor(intent.id));
    expect(first).toMatchObject({ type: "transaction_intent.broadcast", data: { id: intent.id, response: { status: 1 } } });
    await expect(verified(first!)).resolves.toMatchObject({ type: "transaction_intent.broadcast" });

    // The rest of the run: confirmation checks between sleeps until the blocks are there, then successful.
    const { result, error, ctx } = await t.execute({ steps: [...sleepsMining(confirmationBlocks), stored("land", land.result), stored("notify-broadcast", broadcast.result)] });
    expect(error).toBeUndefined();
    expect(result).toEqual({ intentId: intent.id, outcome: "landed", confirmed: true });
    const ran = calledIds(ctx.step.run);
    const checks = ran.filter((id) => String(id).startsWith("confirmations-"));
    // Each sleep mines a block (and the chain mines one a second besides): at most one check per block.
    expect(checks.length).toBeGreaterThanOrEqual(1);
    expect(checks.length).toBeLessThanOrEqual(confirmationBlocks + 1);
    expect(ran).toEqual(["land", "notify-broadcast", ...checks.map((_, i) => `confirmations-${i}`), "notify-confirmed"]);
    expect(calledIds(ctx.step.sleep)).toEqual(checks.slice(1).map((_, i) => `wait-for-blocks-${i}`));

    const confirmed = await intentRow(intent.id);
    expect(confirmed.confirmedAt).toBeInstanceOf(Date);
    expect(await clientOf(31337).getBlockNumber({ cacheTime: 0 })).toBeGreaterThanOrEqual(BigInt(confirmed.blockNumber! + confirmationBlocks));
    const events = await eventually("the successful webhook", () => webhooksFor(intent.id).length > 1 && webhooksFor(intent.id));
    expect(events.map((e) => e.type)).toEqual(["transaction_intent.broadcast", "transaction_intent.successful"]);
    expect(events[1]).toMatchObject({ data: { id: intent.id, response: { status: 1, transactionHash: landed.transactionHash } } });
    await expect(verified(events[1]!)).resolves.toMatchObject({ type: "transaction_intent.successful" });
    const { body } = await call("GET", `/v1/transaction_intents/${intent.id}`, { key });
    expect(body.response).toMatchObject({ status: 1, transactionHash: landed.transactionHash });
  }, 60_000);

  it("re-executing land after the op landed (a crash before it was recorded) records that op, sends nothing again, and still notifies once", async () => {
    const intent = await deposits.intent(1);
    const pending = await intentRow(intent.id);
    // What a process that died right after sending leaves behind: the op on chain, the intent still pending.
    const sent = await enqueue(chainOf(31337), deserializeUserOp(pending.userOperation));
    expect(sent.receipt.success).toBe(true);
    expect(await intentRow(intent.id)).toMatchObject({ status: "pending", transactionHash: null });

    const executorNonces = () => Promise.all(executorAddresses(chainOf(31337)).map((address) => clientOf(31337).getTransactionCount({ address, blockTag: "pending" })));
    const noncesBefore = await executorNonces();

    const retried = await new InngestTestEngine({ function: relayIntent, events: [relayAloneJob(intent.id, projectId)] }).executeStep("land");
    expect(retried.error).toBeUndefined();
    expect(retried.result).toBe("landed");
    expect(await intentRow(intent.id)).toMatchObject({ status: "successful", transactionHash: sent.receipt.transactionHash, response: { status: 1, transactionHash: sent.receipt.transactionHash } });
    expect(await userOperationEvents(intent.userOperationHash)).toHaveLength(1);
    // Not even a failing second bundle: this process's executors sent no transaction.
    expect(await executorNonces()).toEqual(noncesBefore);

    // land executed again after the landing was recorded (a crash before the step's result was stored, as the crash
    // drill found): the run goes on to its webhooks, which a run that had died before them never sent.
    const again = await new InngestTestEngine({ function: relayIntent, events: [relayAloneJob(intent.id, projectId)] }).execute({ steps: sleepsMining(1) });
    expect(again.error).toBeUndefined();
    expect(again.result).toEqual({ intentId: intent.id, outcome: "landed", confirmed: true });
    expect(calledIds(again.ctx.step.run)).toEqual(expect.arrayContaining(["land", "notify-broadcast", "notify-confirmed"]));
    const types = async () => (await eventually("both webhooks", () => webhooksFor(intent.id).length > 1 && webhooksFor(intent.id))).map((e) => e.type).sort();
    expect(await types()).toEqual(["transaction_intent.broadcast", "transaction_intent.successful"]);
    expect(await userOperationEvents(intent.userOperationHash)).toHaveLength(1);
    expect((await intentRow(intent.id)).transactionHash).toBe(sent.receipt.transactionHash);
    expect(await executorNonces()).toEqual(noncesBefore);

    // And once more (a duplicate event): nothing sent on chain, and each webhook still went out once.
    const third = await new InngestTestEngine({ function: relayIntent, events: [relayAloneJob(intent.id, projectId)] }).execute({ steps: sleepsMining(1) });
    expect(third.result).toEqual({ intentId: intent.id, outcome: "landed", confirmed: true });
    await new Promise((r) => setTimeout(r, 1_000));
    expect(await types()).toEqual(["transaction_intent.broadcast", "transaction_intent.successful"]);
    expect(await executorNonces()).toEqual(noncesBefore);
  }, 60_000);
});

/** The relay events of these intents, as one batch. */
const batchOf = (ids: string[]) => ids.map((id) => relayJob(id, projectId)) as [ReturnType<typeof relayJob>, ...ReturnType<typeof relayJob>[]];

describe("the relay of a batch of intents (relay-transaction-intents) under @inngest/test", () => {
  const executorNonces = () => Promise.all(executorAddresses(chainOf(31337)).map((address) => clientOf(31337).getTransactionCount({ address, blockTag: "pending" })));
  const nonceSum = async () => (await executorNonces()).reduce((a, b) => a + b, 0);
  const holdsOf = async (ids: string[]) => (await getDb()).select().from(sponsorshipHolds).where(inArray(sponsorshipHolds.intentId, ids));

  it("lands the batch's ops in one bundle, records them and settles their holds together, notifies each broadcast, then successful after the confirmation blocks", async () => {
    const confirmationBlocks = 2;
    const intents = [await deposits.intent(confirmationBlocks), await deposits.intent(confirmationBlocks), await deposits.intent(confirmationBlocks)];
    const ids = intents.map((i) => i.id);
    const before = await nonceSum();
    const t = new InngestTestEngine({ function: relayIntents, events: batchOf(ids) });

    const land = await t.executeStep("land");
    expect(land.error).toBeUndefined();
    expect(land.result).toEqual(Object.fromEntries(ids.map((id) => [id, "landed"])));
    const rows = await Promise.all(ids.map(intentRow));
    // One bundle: one transaction from one executor for the three ops.
    expect(new Set(rows.map((r) => r.transactionHash)).size).toBe(1);
    expect((await nonceSum()) - before).toBe(1);
    for (const [i, row] of rows.entries()) {
      expect(row).toMatchObject({ status: "successful", confirmedAt: null, response: { status: 1, transactionHash: row.transactionHash } });
      expect(await userOperationEvents(intents[i]!.userOperationHash)).toHaveLength(1);
    }
    // Each hold settled at its op's actual cost (the UserOperationEvent's actualGasCost, recorded as gasCost).
    const holds = await holdsOf(ids);
    expect(holds).toHaveLength(3);
    for (const hold of holds) expect(hold).toMatchObject({ status: "settled", settledAmount: rows.find((r) => r.id === hold.intentId)!.gasCost });
    expect(ids.flatMap(webhooksFor)).toEqual([]);

    const broadcast = await t.executeStep("notify-broadcast", { steps: [stored("land", land.result)] });
    expect(broadcast.result).toBe(3);
    await eventually("the broadcast webhooks", () => ids.every((id) => webhooksFor(id).length > 0));
    for (const id of ids) {
      const [first] = webhooksFor(id);
      expect(first).toMatchObject({ type: "transaction_intent.broadcast", data: { id, response: { status: 1 } } });
      await expect(verified(first!)).resolves.toMatchObject({ type: "transaction_intent.broadcast" });
    }

    const { result, error, ctx } = await t.execute({ steps: [...sleepsMining(confirmationBlocks), stored("land", land.result), stored("notify-broadcast", broadcast.result)] });
    expect(error).toBeUndefined();
    expect(result).toEqual({ intents: 3, landed: 3, alone: 0 });
    const ran = calledIds(ctx.step.run).map(String);
    const checks = ran.filter((id) => id.startsWith("confirmations-"));
    expect(checks.length).toBeGreaterThanOrEqual(1);
    expect(checks.length).toBeLessThanOrEqual(confirmationBlocks + 1);
    // One check and one sleep at a time for the whole batch; the confirmed ones notified after the check that found them.
    expect(ran.slice(0, 2)).toEqual(["land", "notify-broadcast"]);
    expect(ran.at(-1)).toBe(`notify-confirmed-${checks.length - 1}`);
    for (const id of ids) expect((await intentRow(id)).confirmedAt).toBeInstanceOf(Date);
    await eventually("the successful webhooks", () => ids.every((id) => webhooksFor(id).length > 1));
    for (const id of ids) {
      const events = webhooksFor(id);
      expect(events.map((e) => e.type)).toEqual(["transaction_intent.broadcast", "transaction_intent.successful"]);
      await expect(verified(events[1]!)).resolves.toMatchObject({ type: "transaction_intent.successful", data: { id } });
    }
  }, 60_000);

  it("re-executing land after some ops landed (a crash before they were recorded) records those, bundles only the others, and sends nothing twice", async () => {
    const sentBefore = await deposits.intent(1);
    const fresh = await deposits.intent(1);
    const sent = await enqueue(chainOf(31337), deserializeUserOp((await intentRow(sentBefore.id)).userOperation));
    expect(sent.receipt.success).toBe(true);
    const before = await nonceSum();

    const events = batchOf([sentBefore.id, fresh.id]);
    const land = await new InngestTestEngine({ function: relayIntents, events }).executeStep("land");
    expect(land.result).toEqual({ [sentBefore.id]: "landed", [fresh.id]: "landed" });
    expect(await intentRow(sentBefore.id)).toMatchObject({ status: "successful", transactionHash: sent.receipt.transactionHash });
    expect((await intentRow(fresh.id)).transactionHash).not.toBe(sent.receipt.transactionHash);
    // Only the fresh op's bundle was sent.
    expect((await nonceSum()) - before).toBe(1);
    expect(await userOperationEvents(sentBefore.userOperationHash)).toHaveLength(1);
    expect(await userOperationEvents(fresh.userOperationHash)).toHaveLength(1);

    // The whole run again, twice (land executed after its landings were recorded, then a duplicate batch): nothing more
    // on chain, each hold settled once, each webhook once.
    for (let i = 0; i < 2; i++) {
      const again = await new InngestTestEngine({ function: relayIntents, events }).execute({ steps: sleepsMining(1) });
      expect(again.error).toBeUndefined();
      expect(again.result).toEqual({ intents: 2, landed: 2, alone: 0 });
    }
    expect((await nonceSum()) - before).toBe(1);
    const holds = await holdsOf([sentBefore.id, fresh.id]);
    expect(holds.map((h) => h.status)).toEqual(["settled", "settled"]);
    const settles = await (await getDb()).select().from(sponsorshipEntries).where(and(inArray(sponsorshipEntries.intentId, [sentBefore.id, fresh.id]), eq(sponsorshipEntries.kind, "settle")));
    expect(settles).toHaveLength(2);
    await eventually("both webhooks of both", () => [sentBefore.id, fresh.id].every((id) => webhooksFor(id).length > 1));
    await new Promise((r) => setTimeout(r, 500));
    for (const id of [sentBefore.id, fresh.id]) expect(webhooksFor(id).map((e) => e.type).sort()).toEqual(["transaction_intent.broadcast", "transaction_intent.successful"]);
  }, 60_000);

  it("an op that cannot land in its batch's bundle goes on alone (rebuilt there and landed), while the rest of the batch lands", async () => {
    const broken = await deposits.intent(1);
    const fine = await deposits.intent(1);
    // Its stored op's signature spoiled: the bundle's simulation refuses it (AA24), which a rebuild (re-signed) gets past.
    const row = await intentRow(broken.id);
    await (await getDb())
      .update(transactionIntents)
      .set({ userOperation: { ...row.userOperation, signature: `0x${"11".repeat(65)}` } })
      .where(eq(transactionIntents.id, broken.id));

    const t = new InngestTestEngine({ function: relayIntents, events: batchOf([broken.id, fine.id]) });
    const land = await t.executeStep("land");
    expect(land.result).toEqual({ [broken.id]: "alone", [fine.id]: "landed" });
    expect(await intentRow(broken.id)).toMatchObject({ status: "pending", transactionHash: null });
    expect(await userOperationEvents(fine.userOperationHash)).toHaveLength(1);
    const { result, ctx } = await t.execute({ steps: [...sleepsMining(1), stored("land", land.result)] });
    expect(result).toEqual({ intents: 2, landed: 1, alone: 1 });
    expect(calledIds(ctx.step.run)).toContain("relay-alone");

    const alone = await new InngestTestEngine({ function: relayIntent, events: [relayAloneJob(broken.id, projectId)] }).execute({ steps: sleepsMining(1) });
    expect(alone.error).toBeUndefined();
    expect(alone.result).toEqual({ intentId: broken.id, outcome: "landed", confirmed: true });
    const landed = await intentRow(broken.id);
    expect(landed).toMatchObject({ status: "successful", response: { status: 1 } });
    expect(await userOperationEvents(landed.userOperationHash as Hex)).toHaveLength(1);
  }, 60_000);
});
