import { InngestTestEngine } from "@inngest/test";
import { and, asc, eq } from "drizzle-orm";
import fs from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { parseEther, toHex, type Address, type Hex } from "viem";
import { generatePrivateKey, privateKeyToAccount, type PrivateKeyAccount } from "viem/accounts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { testTokenAbi, testTokenBytecode } from "@/contracts/artifacts";
import { walletClient } from "@/lib/chain/clients";
import { getDb } from "@/lib/db/client";
import { outboundEvents, subscriptions, triggers } from "@/lib/db/schema";
import { deliveryTargets } from "@/lib/deliveries/publish";
import { newSigningSecret, sealSigningSecret } from "@/lib/deliveries/signing";
import { checkMonitors, MULTICALL3 } from "@/lib/monitors/monitor";
import { newId } from "@/lib/ids";
import { hold, releaseHold } from "@/lib/sponsorship/ledger";
import { call, newProject } from "@/test/helpers/api";
import { chainOf, clientOf, fundedWallet, mined } from "@/test/helpers/chain";
import { eventually, receiver, runInProcessOnly } from "@/test/helpers/relay-fixtures";
import { CRON_EVENT } from "../runner";
import { deliverEvent } from "./deliver";
import { CHECKS_PER_RUN, monitorBalances } from "./monitors";

const CHAIN = 31337;
/** The chain the test gives Multicall3 (the local chains have none), to read it the multicall way. */
const MULTICALL_CHAIN = 31338;
const SINK = "0x000000000000000000000000000000000000dEaD";

let key: string;
let projectId: string;
let hooks: Awaited<ReturnType<typeof receiver>>;

const setBalance = (chainId: number, address: Address, wei: bigint) =>
  clientOf(chainId).request({ method: "anvil_setBalance" as never, params: [address, toHex(wei)] as never });

/** An external developer account whose key the test holds, with `eth` on the chain. */
async function developerAccount(eth: string, chainId = CHAIN) {
  const owner = privateKeyToAccount(generatePrivateKey());
  const { body } = await call("GET", "/v1/settings/developer_accounts/message_to_sign", { key, query: { address: owner.address } });
  const res = await call("POST", "/v1/settings/developer_accounts", { key, json: { address: owner.address, signature: await owner.signMessage({ message: body.message }) } });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  await setBalance(chainId, owner.address, parseEther(eth));
  return { id: res.body.id as string, owner };
}

/** Sends all but `keep` ETH away: the account's balance really drops, by a transaction. */
async function drain(owner: PrivateKeyAccount, keep: string, chainId = CHAIN) {
  const client = clientOf(chainId);
  const balance = await client.getBalance({ address: owner.address });
  const fees = parseEther("0.01");
  await mined(chainId, await walletClient(chainOf(chainId), owner).sendTransaction({ to: SINK, value: balance - parseEther(keep) - fees }));
}

async function createEvent(json: Record<string, unknown>) {
  const res = await call("POST", "/v1/events", { key, json });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body.id as string;
}

const check = async (...ids: string[]) => checkMonitors(await getDb(), { runId: "run_test", ids });
const definition = async (id: string) => (await call("GET", `/v1/events/${id}`, { key })).body;
const published = async (id: string) =>
  (await getDb()).select().from(outboundEvents).where(eq(outboundEvents.objectId, id)).orderBy(asc(outboundEvents.createdAt));

beforeAll(async () => {
  // Deliveries run in this process; the monitor cron does not (the tests check when they choose).
  await runInProcessOnly([deliverEvent]);
  const project = await newProject("balance monitors");
  key = project.keys.test.secret;
  projectId = project.id;
  hooks = await receiver();
  // A subscription to balance.dev_account with one webhook trigger, stored directly (the subscriptions API is separate work).
  const db = await getDb();
  const subscriptionId = newId("subscription");
  const triggerId = newId("trigger");
  await db.insert(subscriptions).values({ id: subscriptionId, projectId, livemode: false, topic: "balance.dev_account" });
  await db.insert(triggers).values({ id: triggerId, projectId, livemode: false, subscriptionId, type: "webhook", target: `${hooks.url}/monitors`, encryptedSecret: sealSigningSecret(newSigningSecret(), triggerId) });
  // Multicall3 at its canonical address on one chain: deployed from the creation code viem ships (for its
  // deployless multicall; viem does not export it), its runtime code copied there.
  const constants = fs.readFileSync(path.join(path.dirname(createRequire(import.meta.url).resolve("viem")), "constants", "contracts.js"), "utf8");
  const multicall3Bytecode = /multicall3Bytecode = '(0x[0-9a-f]+)'/.exec(constants)![1] as Hex;
  const deployer = await fundedWallet(MULTICALL_CHAIN);
  const receipt = await mined(MULTICALL_CHAIN, await deployer.sendTransaction({ data: multicall3Bytecode }));
  const code = await clientOf(MULTICALL_CHAIN).getCode({ address: receipt.contractAddress! });
  await clientOf(MULTICALL_CHAIN).request({ method: "anvil_setCode" as never, params: [MULTICALL3, code] as never });
});

afterAll(() => hooks.close());

describe("balance.dev_account monitors", () => {
  it("fire once when drained, not again while low, re-arm after a refill and fire on the next drain; subscribers receive it", async () => {
    const { id: account, owner } = await developerAccount("1");
    const id = await createEvent({ name: "treasury low", topic: "balance.dev_account", developerAccount: account, chainId: CHAIN, threshold: parseEther("0.5").toString() });

    await check(id);
    expect((await definition(id)).monitor).toMatchObject({ value: parseEther("1").toString(), state: "armed", error: null, firedAt: null });

    await drain(owner, "0.1");
    const first = await check(id);
    expect(first.fired).toEqual([id]);
    const fired = await definition(id);
    expect(fired.monitor).toMatchObject({ state: "fired", value: expect.any(String), blockNumber: expect.any(Number), checkedAt: expect.any(Number), firedAt: expect.any(Number) });
    expect(BigInt(fired.monitor.value)).toBeLessThan(parseEther("0.5"));

    const [message] = await published(id);
    expect(message).toMatchObject({ projectId, livemode: false, topic: "balance.dev_account", objectId: id, requestId: "run_test" });
    const body = JSON.parse(message!.body);
    expect(body).toEqual({
      type: "balance.dev_account",
      date: expect.any(Number),
      data: {
        object: "event",
        event: expect.objectContaining({ id, object: "event", topic: "balance.dev_account", developerAccount: { id: account }, threshold: parseEther("0.5").toString() }),
        value: fired.monitor.value,
        threshold: parseEther("0.5").toString(),
        blockNumber: fired.monitor.blockNumber,
        chainId: CHAIN,
      },
    });
    expect(await deliveryTargets(await getDb(), { projectId, livemode: false }, "balance.dev_account")).toHaveLength(1);
    const delivered = await eventually("the subscriber's delivery", () => hooks.received.find((r) => r.headers["webhook-id"] === message!.id));
    expect(delivered.path).toBe("/monitors");
    expect(JSON.parse(delivered.body)).toEqual(body);

    // Still low: no event storm.
    for (let i = 0; i < 3; i++) expect((await check(id)).fired).toEqual([]);
    expect(await published(id)).toHaveLength(1);

    await setBalance(CHAIN, owner.address, parseEther("2"));
    await check(id);
    expect((await definition(id)).monitor).toMatchObject({ state: "armed", firedAt: null, belowSinceBlock: null, value: parseEther("2").toString() });

    await drain(owner, "0.2");
    expect((await check(id)).fired).toEqual([id]);
    const messages = await published(id);
    expect(messages).toHaveLength(2);
    expect(new Set(messages.map((m) => m.dedupeKey)).size).toBe(2);
    await eventually("the second delivery", () => hooks.received.some((r) => r.headers["webhook-id"] === messages[1]!.id));
  });

  it("waits numberOfBlocks blocks below the threshold before firing", async () => {
    const { id: account, owner } = await developerAccount("1");
    const id = await createEvent({ name: "patient", topic: "balance.dev_account", developerAccount: account, chainId: CHAIN, threshold: parseEther("0.5").toString(), numberOfBlocks: 50 });
    await drain(owner, "0.1");
    expect((await check(id)).fired).toEqual([]);
    const below = (await definition(id)).monitor;
    expect(below).toMatchObject({ state: "below", belowSinceBlock: below.blockNumber, firedAt: null });

    await clientOf(CHAIN).request({ method: "anvil_mine" as never, params: [toHex(10)] as never });
    expect((await check(id)).fired).toEqual([]);
    expect((await definition(id)).monitor).toMatchObject({ state: "below", belowSinceBlock: below.blockNumber });

    await clientOf(CHAIN).request({ method: "anvil_mine" as never, params: [toHex(40)] as never });
    expect((await check(id)).fired).toEqual([id]);
    const fired = (await definition(id)).monitor;
    expect(fired.blockNumber - below.belowSinceBlock).toBeGreaterThanOrEqual(50);
    expect(await published(id)).toHaveLength(1);
  });

  it("keeps a read error on its definition without stopping the others", async () => {
    const { id: account } = await developerAccount("1");
    const broken = await createEvent({ name: "gone", topic: "balance.dev_account", developerAccount: account, chainId: CHAIN, threshold: "1" });
    const healthy = await createEvent({ name: "deposit", topic: "balance.project", chainId: CHAIN, threshold: "1" });
    await call("DELETE", `/v1/settings/developer_accounts/${account}`, { key });
    const summary = await check(broken, healthy);
    expect(summary).toMatchObject({ checked: 2, errors: 1 });
    expect((await definition(broken)).monitor.error).toMatch(/deleted/);
    expect((await definition(healthy)).monitor).toMatchObject({ error: null, state: "armed" });
  });
});

describe("balance.contract monitors", () => {
  it("watch a TestToken balanceOf", async () => {
    const holder = await fundedWallet(CHAIN);
    const receipt = await mined(CHAIN, await holder.deployContract({ abi: testTokenAbi, bytecode: testTokenBytecode, args: ["Gold", "GOLD"] }));
    const token = receipt.contractAddress!;
    const contract = (await call("POST", "/v1/contracts", { key, json: { name: "Gold", chainId: CHAIN, address: token, abi: testTokenAbi } })).body.id;
    await mined(CHAIN, await holder.writeContract({ address: token, abi: testTokenAbi, functionName: "mint", args: [holder.account.address, parseEther("12")] }));
    const id = await createEvent({ name: "gold low", topic: "balance.contract", contract, functionName: "balanceOf", functionArgs: [holder.account.address], threshold: parseEther("10").toString() });

    await check(id);
    expect((await definition(id)).monitor).toMatchObject({ state: "armed", value: parseEther("12").toString() });
    await mined(CHAIN, await holder.writeContract({ address: token, abi: testTokenAbi, functionName: "transfer", args: [SINK, parseEther("3")] }));
    expect((await check(id)).fired).toEqual([id]);
    expect((await definition(id)).monitor).toMatchObject({ state: "fired", value: parseEther("9").toString() });
    const [message] = await published(id);
    expect(JSON.parse(message!.body)).toMatchObject({ type: "balance.contract", data: { value: parseEther("9").toString(), event: { id, contract: { id: contract } } } });
    // Nobody subscribed to balance.contract: recorded, delivered nowhere.
    expect(await deliveryTargets(await getDb(), { projectId, livemode: false }, "balance.contract")).toEqual([]);
  });

  it("read a chain with Multicall3 in one multicall: view calls and native balances alike", async () => {
    const { id: account, owner } = await developerAccount("3", MULTICALL_CHAIN);
    const native = await createEvent({ name: "mc dev", topic: "balance.dev_account", developerAccount: account, chainId: MULTICALL_CHAIN, threshold: parseEther("1").toString() });
    const holder = await fundedWallet(MULTICALL_CHAIN);
    const receipt = await mined(MULTICALL_CHAIN, await holder.deployContract({ abi: testTokenAbi, bytecode: testTokenBytecode, args: ["Silver", "SLV"] }));
    const token = receipt.contractAddress!;
    await mined(MULTICALL_CHAIN, await holder.writeContract({ address: token, abi: testTokenAbi, functionName: "mint", args: [holder.account.address, parseEther("4")] }));
    const contract = (await call("POST", "/v1/contracts", { key, json: { name: "Silver", chainId: MULTICALL_CHAIN, address: token, abi: testTokenAbi } })).body.id;
    const view = await createEvent({ name: "mc view", topic: "balance.contract", contract, functionName: "balanceOf", functionArgs: [holder.account.address], threshold: "1" });
    await check(native, view);
    expect((await definition(native)).monitor).toMatchObject({ state: "armed", value: parseEther("3").toString(), error: null });
    expect((await definition(view)).monitor).toMatchObject({ state: "armed", value: parseEther("4").toString(), error: null });
    await drain(owner, "0.5", MULTICALL_CHAIN);
    expect((await check(native, view)).fired).toEqual([native]);
  });
});

describe("balance.project monitors: the project's own sponsorship balance", () => {
  /** A project of its own (its balances are the test's), with a subscription to balance.project. */
  async function sponsoredProject(name: string) {
    const project = await newProject(name);
    const ctx = { projectId: project.id, livemode: false };
    const db = await getDb();
    const subscriptionId = newId("subscription");
    const triggerId = newId("trigger");
    await db.insert(subscriptions).values({ id: subscriptionId, ...ctx, topic: "balance.project" });
    await db.insert(triggers).values({ id: triggerId, ...ctx, subscriptionId, type: "webhook", target: `${hooks.url}/${project.id}`, encryptedSecret: sealSigningSecret(newSigningSecret(), triggerId) });
    const create = async (json: Record<string, unknown>) => {
      const res = await call("POST", "/v1/events", { key: project.keys.test.secret, json: { topic: "balance.project", ...json } });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      return res.body.id as string;
    };
    const read = async (id: string) => (await call("GET", `/v1/events/${id}`, { key: project.keys.test.secret })).body;
    /** Holds `eth` of the project's balance on the chain (an operation in flight); the answer gives it back. */
    const spend = async (chainId: number, eth: string) => {
      const held = await db.transaction((tx) => hold(tx, ctx, { chainId, amount: parseEther(eth), cause: "intent", usdPrice: null }));
      return () => db.transaction((tx) => releaseHold(tx, held.id));
    };
    return { project, create, read, spend };
  }

  it("with a chainId, watch the project's available balance there (not the paymaster's deposit), once per crossing", async () => {
    const { project, create, read, spend } = await sponsoredProject("monitored balance");
    const threshold = parseEther("0.5").toString();
    const id = await create({ name: "balance low", chainId: CHAIN, threshold });
    // The local chains' test-mode credit of 1: far below the paymaster's deposit.
    await check(id);
    expect((await read(id)).monitor).toMatchObject({ state: "armed", value: parseEther("1").toString(), error: null });

    const release = await spend(CHAIN, "0.6");
    expect((await check(id)).fired).toEqual([id]);
    const fired = (await read(id)).monitor;
    expect(fired).toMatchObject({ state: "fired", value: parseEther("0.4").toString(), blockNumber: expect.any(Number) });
    const [message] = await published(id);
    expect(JSON.parse(message!.body)).toEqual({
      type: "balance.project",
      date: expect.any(Number),
      data: { object: "event", event: expect.objectContaining({ id, topic: "balance.project", chainId: CHAIN }), value: parseEther("0.4").toString(), threshold, blockNumber: fired.blockNumber, chainId: CHAIN },
    });
    const delivered = await eventually("the subscriber's delivery", () => hooks.received.find((r) => r.headers["webhook-id"] === message!.id));
    expect(delivered.path).toBe(`/${project.id}`);

    expect((await check(id)).fired).toEqual([]);
    await release();
    await check(id);
    expect((await read(id)).monitor).toMatchObject({ state: "armed", value: parseEther("1").toString(), firedAt: null });
    await spend(CHAIN, "0.7");
    expect((await check(id)).fired).toEqual([id]);
    expect(await published(id)).toHaveLength(2);
  });

  it("without a chainId, watch every chain of the mode: each chain below the threshold fires once per crossing, with its chainId", async () => {
    const { create, read, spend } = await sponsoredProject("monitored everywhere");
    const id = await create({ name: "any chain low", threshold: parseEther("0.5").toString() });
    expect((await read(id)).chainId).toBeNull();
    await check(id);
    const armed = (await read(id)).monitor;
    // The test-mode chains of this process (31339 is a live chain).
    expect(armed).toMatchObject({ state: "armed", value: parseEther("1").toString(), error: null });
    expect(armed.chains).toEqual([
      expect.objectContaining({ chainId: 31337, state: "armed", value: parseEther("1").toString(), blockNumber: expect.any(Number) }),
      expect.objectContaining({ chainId: 31338, state: "armed", value: parseEther("1").toString(), blockNumber: expect.any(Number) }),
    ]);
    const chainsOf = async () => Object.fromEntries(((await read(id)).monitor.chains as { chainId: number; state: string }[]).map((c) => [c.chainId, c.state]));
    const chainIdsPublished = async () => (await published(id)).map((m) => JSON.parse(m.body).data.chainId as number);

    const release31338 = await spend(MULTICALL_CHAIN, "0.6");
    expect((await check(id)).fired).toEqual([id]);
    expect(await chainsOf()).toEqual({ 31337: "armed", 31338: "fired" });
    expect((await read(id)).monitor).toMatchObject({ state: "fired", value: parseEther("0.4").toString(), firedAt: expect.any(Number) });
    expect(await chainIdsPublished()).toEqual([31338]);
    const [first] = await published(id);
    expect(JSON.parse(first!.body).data).toMatchObject({ value: parseEther("0.4").toString(), chainId: 31338, event: { id, chainId: null } });

    // Still below on 31338: nothing more; then 31337 crosses on its own.
    expect((await check(id)).fired).toEqual([]);
    await spend(CHAIN, "0.9");
    expect((await check(id)).fired).toEqual([id]);
    expect(await chainIdsPublished()).toEqual([31338, 31337]);
    expect(await chainsOf()).toEqual({ 31337: "fired", 31338: "fired" });

    // 31338 back above re-arms 31338 alone; its next crossing fires again.
    await release31338();
    expect((await check(id)).fired).toEqual([]);
    expect(await chainsOf()).toEqual({ 31337: "fired", 31338: "armed" });
    await spend(MULTICALL_CHAIN, "0.8");
    expect((await check(id)).fired).toEqual([id]);
    expect(await chainIdsPublished()).toEqual([31338, 31337, 31338]);
    expect(new Set((await published(id)).map((m) => m.dedupeKey)).size).toBe(3);
    await eventually("the three deliveries", () => (hooks.received.filter((r) => r.body.includes(`"id":"${id}"`)).length >= 3 ? true : undefined));
  });

  it("without a chainId, wait numberOfBlocks blocks of the chain that went below", async () => {
    const { create, read, spend } = await sponsoredProject("patient everywhere");
    const id = await create({ name: "patient", threshold: parseEther("0.5").toString(), numberOfBlocks: 20 });
    await spend(MULTICALL_CHAIN, "0.6");
    expect((await check(id)).fired).toEqual([]);
    const below = ((await read(id)).monitor.chains as { chainId: number; state: string }[]).find((c) => c.chainId === MULTICALL_CHAIN)!;
    expect(below.state).toBe("below");
    await clientOf(MULTICALL_CHAIN).request({ method: "anvil_mine" as never, params: [toHex(20)] as never });
    expect((await check(id)).fired).toEqual([id]);
    expect((await read(id)).monitor).toMatchObject({ state: "fired" });
    expect(await published(id)).toHaveLength(1);
  });

  it("of a live project watch its live chains, which start at zero", async () => {
    const project = await newProject("live monitor");
    const res = await call("POST", "/v1/events", { key: project.keys.live.secret, json: { name: "live", topic: "balance.project", threshold: "1" } });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect((await check(res.body.id)).fired).toEqual([res.body.id]);
    const { monitor } = (await call("GET", `/v1/events/${res.body.id}`, { key: project.keys.live.secret })).body;
    expect(monitor.chains).toEqual([expect.objectContaining({ chainId: 31339, value: "0", state: "fired" })]);
  });
});

describe("the monitor-balances function", () => {
  it("checks six times in its minute, ten seconds apart, each check a step", async () => {
    const { id: account, owner } = await developerAccount("1");
    const id = await createEvent({ name: "cron", topic: "balance.dev_account", developerAccount: account, chainId: CHAIN, threshold: parseEther("0.5").toString() });
    await drain(owner, "0.1");
    const steps = Array.from({ length: CHECKS_PER_RUN - 1 }, (_, i) => ({ id: `wait-${i}`, handler: () => null }));
    const { result, ctx } = await new InngestTestEngine({ function: monitorBalances, events: [{ name: CRON_EVENT, data: { cron: "* * * * *" } }], steps }).execute();
    expect((ctx.step.run as unknown as { mock: { calls: unknown[][] } }).mock.calls.map((c) => c[0])).toEqual(["check-0", "check-1", "check-2", "check-3", "check-4", "check-5"]);
    expect((ctx.step.sleep as unknown as { mock: { calls: unknown[][] } }).mock.calls).toEqual(Array.from({ length: 5 }, (_, i) => [`wait-${i}`, "10s"]));
    // Fired in the first check only, whatever else the run's checks saw.
    expect((result as { fired: string[] }).fired.filter((f) => f === id)).toEqual([id]);
    const messages = await (await getDb()).select().from(outboundEvents).where(and(eq(outboundEvents.objectId, id), eq(outboundEvents.topic, "balance.dev_account")));
    expect(messages).toHaveLength(1);
    expect(messages[0]!.requestId).toEqual(expect.any(String));
  });
});
