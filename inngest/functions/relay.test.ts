import { InngestTestEngine } from "@inngest/test";
import Openfort from "@openfort/openfort-node";
import type { Hex } from "viem";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { enqueue } from "@/lib/chain/relayer";
import { executorAddresses } from "@/lib/chain/relayer/testing";
import { deserializeUserOp } from "@/lib/intents/userop-json";
import { call, newProject } from "@/test/api";
import { chainOf, clientOf, userOperationEvents } from "@/test/chain";
import { eventually, intentRow, receiver, runInProcessOnly, sponsoredDeposits } from "@/test/relay-fixtures";
import { relayEvent } from "../events";
import { relayIntent } from "./relay";
import { deliverEvent } from "./deliver";

let key: string;
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
  deposits = await sponsoredDeposits(key);
  hooks = await receiver();
  await call("POST", "/v1/settings/webhook", { key, json: { url: `${hooks.url}/hooks` } });
});
afterAll(() => hooks?.close());

describe("the relay function (relay-transaction-intent) under @inngest/test", () => {
  it("lands a sponsored custodial intent created through the API, notifies broadcast, waits for its confirmation blocks, then notifies successful", async () => {
    const confirmationBlocks = 2;
    const intent = await deposits.intent(confirmationBlocks);
    expect(await intentRow(intent.id)).toMatchObject({ status: "pending", response: null, transactionHash: null });
    const t = new InngestTestEngine({ function: relayIntent, events: [relayEvent(intent.id)] });

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

    const retried = await new InngestTestEngine({ function: relayIntent, events: [relayEvent(intent.id)] }).executeStep("land");
    expect(retried.error).toBeUndefined();
    expect(retried.result).toBe("landed");
    expect(await intentRow(intent.id)).toMatchObject({ status: "successful", transactionHash: sent.receipt.transactionHash, response: { status: 1, transactionHash: sent.receipt.transactionHash } });
    expect(await userOperationEvents(intent.userOperationHash)).toHaveLength(1);
    // Not even a failing second bundle: this process's executors sent no transaction.
    expect(await executorNonces()).toEqual(noncesBefore);

    // land executed again after the landing was recorded (a crash before the step's result was stored, as the crash
    // drill found): the run goes on to its webhooks, which a run that had died before them never sent.
    const again = await new InngestTestEngine({ function: relayIntent, events: [relayEvent(intent.id)] }).execute({ steps: sleepsMining(1) });
    expect(again.error).toBeUndefined();
    expect(again.result).toEqual({ intentId: intent.id, outcome: "landed", confirmed: true });
    expect(calledIds(again.ctx.step.run)).toEqual(expect.arrayContaining(["land", "notify-broadcast", "notify-confirmed"]));
    const types = async () => (await eventually("both webhooks", () => webhooksFor(intent.id).length > 1 && webhooksFor(intent.id))).map((e) => e.type).sort();
    expect(await types()).toEqual(["transaction_intent.broadcast", "transaction_intent.successful"]);
    expect(await userOperationEvents(intent.userOperationHash)).toHaveLength(1);
    expect((await intentRow(intent.id)).transactionHash).toBe(sent.receipt.transactionHash);
    expect(await executorNonces()).toEqual(noncesBefore);

    // And once more (a duplicate event): nothing sent on chain, and each webhook still went out once.
    const third = await new InngestTestEngine({ function: relayIntent, events: [relayEvent(intent.id)] }).execute({ steps: sleepsMining(1) });
    expect(third.result).toEqual({ intentId: intent.id, outcome: "landed", confirmed: true });
    await new Promise((r) => setTimeout(r, 1_000));
    expect(await types()).toEqual(["transaction_intent.broadcast", "transaction_intent.successful"]);
    expect(await executorNonces()).toEqual(noncesBefore);
  }, 60_000);
});
