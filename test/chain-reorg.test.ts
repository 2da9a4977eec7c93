import { and, eq, gte } from "drizzle-orm";
import { keccak256, parseEther, toHex, type Hex } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { entryPointAbi } from "@/contracts/artifacts";
import { startAnvil, type AnvilNode } from "@/lib/chain/anvil";
import { publicClient } from "@/lib/chain/clients";
import { ourPaymasters, serviceDeployment } from "@/lib/chain/contracts";
import type { PaidOp } from "@/lib/chain/paid-ops";
import { observe, removeLandings, removeOffRange, type LandingRow } from "@/lib/sponsorship/attribution";
import { findChain, type ChainConfig } from "@/lib/chain/registry";
import { getDb } from "@/lib/db/client";
import { accounts, chainLandings, outboundEvents, sponsorshipEntries } from "@/lib/db/schema";
import { prepareChain } from "@/lib/prepare-chains";
import type { ProjectWithKeys } from "@/lib/projects/service";
import { balanceOf } from "@/lib/sponsorship/ledger";
import { call, newProject } from "./helpers/api";
import { followed } from "./helpers/follow";
import { checkConfirmations, enqueueOp, landIntent } from "@/lib/intents/land-intent";
import { recordLanding } from "@/lib/intents/landing";
import { loadOp } from "@/lib/intent-records/versioned-op";
import { intentRow, runInProcessOnly } from "./helpers/relay-fixtures";
import { InngestTestEngine } from "@inngest/test";
import { vi } from "vitest";
import { GET as readyRoute } from "@/app/readyz/route";
import { describeReconciliation, sponsorshipCommand } from "@/cli/sponsorship";
import { CRON_EVENT } from "@/inngest/runner";
import { reconcileSponsorship } from "@/inngest/functions/reconcile";
import { runAdminCommand } from "@/lib/admin-commands";
import { submitUserOperations } from "@/lib/chain/relayer/testing";
import { freshAccount, signedOp } from "@/lib/chain/testing";
import type { ChainReconciliation } from "@/lib/follower/reconcile";
import { scrapeMetrics } from "@/lib/metrics-scrape";

/**
 * Reorgs (issue 40): a landing whose block leaves the chain goes back — the intent pending again and relayed again,
 * its settlement reversed by a journal entry, its account no longer deployed until the op lands again — and a deposit
 * credited in a removed block is reversed. evm_revert rewinds a whole chain: this runs on an anvil of its own.
 */
const CHAIN_ID = 31340;
let node: AnvilNode;
let chain: ChainConfig;
let project: ProjectWithKeys;
const saved = { LOCAL_CHAINS: process.env.LOCAL_CHAINS };

const rpc = <T = unknown>(method: string, params: unknown[] = []) => publicClient(chain).request({ method: method as never, params: params as never }) as Promise<T>;

beforeAll(async () => {
  node = await startAnvil({ chainId: CHAIN_ID, port: 0, blockTime: 0 });
  process.env.LOCAL_CHAINS = `${process.env.LOCAL_CHAINS},${CHAIN_ID}`;
  process.env[`CHAIN_${CHAIN_ID}_RPC_URL`] = node.rpcUrl;
  chain = findChain(CHAIN_ID)!;
  await prepareChain(chain);
  project = await newProject("reorgs");
  // No background functions: the test lands intents and follows the chain itself, one step at a time.
  await runInProcessOnly();
}, 120_000);
afterAll(async () => {
  process.env.LOCAL_CHAINS = saved.LOCAL_CHAINS;
  delete process.env[`CHAIN_${CHAIN_ID}_RPC_URL`];
  await node?.stop();
});

async function openPolicy(key: string) {
  const policy = await call("POST", "/v1/policies", { key, json: { name: "reorg", chainId: CHAIN_ID, strategy: { sponsorSchema: "pay_for_user" } } });
  expect(policy.status, JSON.stringify(policy.body)).toBe(200);
  const rule = await call("POST", "/v1/policy_rules", { key, json: { policy: policy.body.id, type: "contract_functions", wildcard: true, functionName: "All functions" } });
  expect(rule.status, JSON.stringify(rule.body)).toBe(200);
  return policy.body.id as string;
}

/** An open policy of the project, the follower caught up, and the project's balance then. */
async function followedWithPolicy() {
  const key = project.keys.test.secret;
  const ctx = { projectId: project.id, livemode: false };
  const db = await getDb();
  const policy = await openPolicy(key);
  await followed(CHAIN_ID);
  return { key, ctx, db, policy, before: await balanceOf(db, ctx, CHAIN_ID) };
}

const entriesOf = async (intentId: string) =>
  (await (await getDb()).select().from(sponsorshipEntries).where(eq(sponsorshipEntries.intentId, intentId))).map((e) => ({ kind: e.kind, amount: e.amount })).sort((a, b) => a.kind.localeCompare(b.kind));

describe("a reorg that removes a landing", () => {
  it("sends the intent back, reverses its settlement, undeploys its account (its player's next intent waits for it), and lands it again: the books end as the chain", async () => {
    const key = project.keys.test.secret;
    const ctx = { projectId: project.id, livemode: false };
    const db = await getDb();
    const policy = await openPolicy(key);
    const player = (await call("POST", "/v1/players", { key, json: { name: "reorged" } })).body;
    const before = await balanceOf(db, ctx, CHAIN_ID);
    const snapshot = await rpc<Hex>("evm_snapshot");

    const to = privateKeyToAccount(generatePrivateKey()).address;
    const created = await call("POST", "/v1/transaction_intents", { key, json: { chainId: CHAIN_ID, player: player.id, policy, interactions: [{ to, value: "0" }] } });
    expect(created.status, JSON.stringify(created.body)).toBe(200);
    expect(await landIntent(db, created.body.id)).toBe("landed");
    const first = (await call("GET", `/v1/transaction_intents/${created.body.id}`, { key })).body;
    await followed(CHAIN_ID);
    const landed = await intentRow(created.body.id);
    expect(landed.blockHash).toBe((await publicClient(chain).getBlock({ blockNumber: BigInt(landed.blockNumber!) })).hash!.toLowerCase());
    const cost1 = BigInt(landed.gasCost!);
    expect(await balanceOf(db, ctx, CHAIN_ID)).toMatchObject({ held: before.held, settled: before.settled + cost1 });
    const [account] = await db.select().from(accounts).where(eq(accounts.id, landed.accountId));
    expect(account!.deployed).toBe(true);

    // The block leaves the chain: back to before the intent, and a longer chain without it.
    await rpc("evm_revert", [snapshot]);
    await rpc("anvil_mine", [toHex(3)]);
    expect(await publicClient(chain).getCode({ address: account!.address as Hex })).toBeUndefined();
    const reorged = await followed(CHAIN_ID);
    expect(reorged.reorgs.length).toBeGreaterThanOrEqual(1);
    const [gone] = await db.select().from(chainLandings).where(eq(chainLandings.transactionHash, first.response.transactionHash.toLowerCase()));
    expect(gone!.status).toBe("removed");
    // Never an edit: the settle entry stands, a reversal undoes it, and the hold is held again.
    const reversal = await db.select().from(sponsorshipEntries).where(and(eq(sponsorshipEntries.intentId, created.body.id), eq(sponsorshipEntries.kind, "reversal")));
    expect(reversal).toHaveLength(1);
    expect(reversal[0]!.amount).toBe(cost1.toString());

    // Sent back: pending, its account not deployed (the op that deployed it is gone).
    expect(await intentRow(created.body.id)).toMatchObject({ status: "pending", transactionHash: null, blockHash: null, confirmedAt: null });
    expect((await db.select().from(accounts).where(eq(accounts.id, landed.accountId)))[0]!.deployed).toBe(false);
    // The player is not locked out: its next intent is accepted, built to run after the deployment its first op makes.
    const next = await call("POST", "/v1/transaction_intents", { key, json: { chainId: CHAIN_ID, player: player.id, policy, interactions: [{ to, value: "0" }] } });
    expect(next.status, JSON.stringify(next.body)).toBe(200);
    expect(next.body.userOperation.initCode).toBe("0x");

    // Relayed again (the relayer's executor nonce follows the chain back): it lands in the chain as it is now, settled once more.
    expect(await landIntent(db, created.body.id)).toBe("landed");
    const again = await intentRow(created.body.id);
    expect(again.status).toBe("successful");
    expect(again.transactionHash).not.toBe(first.response.transactionHash);
    const receipt = await publicClient(chain).getTransactionReceipt({ hash: again.transactionHash as Hex });
    expect(receipt.blockHash.toLowerCase()).toBe(again.blockHash);
    await followed(CHAIN_ID);
    const cost2 = BigInt(again.gasCost!);
    const kinds = (await entriesOf(created.body.id)).map((e) => e.kind);
    expect(kinds.filter((k) => k === "settle")).toHaveLength(2);
    expect(kinds.filter((k) => k === "reversal")).toHaveLength(1);
    expect((await db.select().from(accounts).where(eq(accounts.id, landed.accountId)))[0]!.deployed).toBe(true);
    expect(await landIntent(db, next.body.id)).toBe("landed");
    expect((await intentRow(next.body.id)).status).toBe("successful");
    await followed(CHAIN_ID);
    const cost3 = BigInt((await intentRow(next.body.id)).gasCost!);
    expect(await balanceOf(db, ctx, CHAIN_ID)).toMatchObject({ held: before.held, settled: before.settled + cost2 + cost3 });
  }, 180_000);

  it("fails a deployer whose landing left the chain once another intent deploys the account, and says so by webhook", async () => {
    const { key, db, policy } = await followedWithPolicy();
    const player = (await call("POST", "/v1/players", { key, json: { name: "replaced deployer" } })).body;
    const snapshot = await rpc<Hex>("evm_snapshot");
    const to = privateKeyToAccount(generatePrivateKey()).address;
    const first = await call("POST", "/v1/transaction_intents", { key, json: { chainId: CHAIN_ID, player: player.id, policy, interactions: [{ to, value: "0" }] } });
    expect(first.status, JSON.stringify(first.body)).toBe(200);
    expect(await landIntent(db, first.body.id)).toBe("landed");
    await followed(CHAIN_ID);

    // The deployment leaves the chain; before the follower sees it, the player's next intent finds no code and deploys.
    await rpc("evm_revert", [snapshot]);
    await rpc("anvil_mine", [toHex(3)]);
    const next = await call("POST", "/v1/transaction_intents", { key, json: { chainId: CHAIN_ID, player: player.id, policy, interactions: [{ to, value: "0" }] } });
    expect(next.status, JSON.stringify(next.body)).toBe(200);
    expect(next.body.userOperation.initCode).not.toBe("0x");

    await followed(CHAIN_ID);
    expect(await intentRow(first.body.id)).toMatchObject({ status: "failed", transactionHash: null, error: expect.stringContaining("another intent now deploys") });
    const events = await db.select({ topic: outboundEvents.topic }).from(outboundEvents).where(eq(outboundEvents.dedupeKey, `${first.body.id}:transaction_intent.failed`));
    expect(events).toHaveLength(1);
    expect(await landIntent(db, next.body.id)).toBe("landed");
  }, 120_000);

  it("undoes a landing the relayer recorded ahead of the follower when its block leaves the chain before the follower reads it", async () => {
    const { key, ctx, db, policy, before } = await followedWithPolicy();
    const snapshot = await rpc<Hex>("evm_snapshot");
    const created = await call("POST", "/v1/transaction_intents", { key, json: { chainId: CHAIN_ID, policy, interactions: [{ to: privateKeyToAccount(generatePrivateKey()).address, value: "0" }] } });
    expect(created.status, JSON.stringify(created.body)).toBe(200);
    // Landed and settled by the relayer (a one-block confirmation depth), before the follower has read its block.
    expect(await landIntent(db, created.body.id)).toBe("landed");
    const cost = BigInt((await intentRow(created.body.id)).gasCost!);
    expect((await balanceOf(db, ctx, CHAIN_ID)).settled).toBe(before.settled + cost);
    await rpc("evm_revert", [snapshot]);
    await rpc("anvil_mine", [toHex(2)]);
    const seen = await followed(CHAIN_ID);
    expect(seen.reorgs.map((r) => r.landings + r.intents).reduce((a, b) => a + b, 0)).toBeGreaterThanOrEqual(2);
    expect(await intentRow(created.body.id)).toMatchObject({ status: "pending", transactionHash: null });
    expect((await balanceOf(db, ctx, CHAIN_ID)).settled).toBe(before.settled);
    expect(await landIntent(db, created.body.id)).toBe("landed");
    await followed(CHAIN_ID);
    expect((await balanceOf(db, ctx, CHAIN_ID)).settled).toBe(before.settled + BigInt((await intentRow(created.body.id)).gasCost!));
  }, 120_000);

  it("does not record a landing the relayer read from a block that left the chain after the follower read past it", async () => {
    const { key, ctx, db, policy, before } = await followedWithPolicy();
    const created = await call("POST", "/v1/transaction_intents", { key, json: { chainId: CHAIN_ID, policy, interactions: [{ to: privateKeyToAccount(generatePrivateKey()).address, value: "0" }] } });
    expect(created.status, JSON.stringify(created.body)).toBe(200);
    const intent = await intentRow(created.body.id);
    const snapshot = await rpc<Hex>("evm_snapshot");
    // The relayer's bundle is mined and its receipts read; then its block leaves the chain and the follower reads past
    // it, all before the relayer records what it read.
    const { receipt, transaction } = await enqueueOp(chain, loadOp(intent.userOperation));
    await rpc("evm_revert", [snapshot]);
    await rpc("anvil_mine", [toHex(2)]);
    await followed(CHAIN_ID);
    await recordLanding(db, intent, receipt, transaction);
    const landings = await db.select().from(chainLandings).where(eq(chainLandings.userOperationHash, receipt.userOpHash.toLowerCase()));
    expect(landings.filter((l) => l.status !== "removed")).toEqual([]);
    expect((await balanceOf(db, ctx, CHAIN_ID)).settled).toBe(before.settled);
    // The intent (recorded from the receipt) is sent back by its confirmation check, lands again and is charged once.
    await rpc("anvil_mine", [toHex(intent.confirmationBlocks + 1)]);
    expect(await checkConfirmations(db, created.body.id)).toMatchObject({ reorged: true });
    expect(await landIntent(db, created.body.id)).toBe("landed");
    await followed(CHAIN_ID);
    expect((await balanceOf(db, ctx, CHAIN_ID)).settled).toBe(before.settled + BigInt((await intentRow(created.body.id)).gasCost!));
  }, 120_000);

  it("checks every landing recorded in a range against the blocks read, in the transaction that moves the follower past it", async () => {
    const db = await getDb();
    const [pair] = ourPaymasters(chain);
    const far = 10_000_000n; // past anything this chain mines in the test
    const a: Hex = `0x${"aa".repeat(32)}`;
    const b: Hex = `0x${"bb".repeat(32)}`;
    const c: Hex = `0x${"cc".repeat(32)}`;
    const paid = (blockNumber: bigint, blockHash: Hex): PaidOp => ({
      chainId: CHAIN_ID,
      entryPoint: pair!.entryPoint,
      paymaster: pair!.paymaster,
      userOpHash: keccak256(toHex(`${blockNumber}`)),
      sender: privateKeyToAccount(generatePrivateKey()).address,
      nonce: 0n,
      success: true,
      actualGasCost: 1n,
      actualGasUsed: 1n,
      transactionHash: keccak256(toHex(`tx ${blockNumber}`)),
      blockNumber,
      blockHash,
      logIndex: 0,
    });
    await db.transaction((tx) => observe(tx, [paid(far, a), paid(far + 1n, c)], null));
    const read = new Map<number, string>([[Number(far), a]]);
    const check = () => db.transaction((tx) => removeOffRange(tx, CHAIN_ID, { from: far, to: far + 1n }, (n) => read.get(n)));
    // A block not read (a landing recorded since the follower looked): the range is read again.
    expect(await check()).toBe("unchecked");
    read.set(Number(far) + 1, b);
    expect((await check()) as LandingRow[]).toMatchObject([{ blockNumber: Number(far) + 1, blockHash: c, status: "removed" }]);
    read.set(Number(far), b);
    expect((await check()) as LandingRow[]).toMatchObject([{ blockNumber: Number(far), status: "removed" }]);
    expect(await check()).toEqual([]);

    // The block comes back (a reorg undone, or a node that had it wrong): the same log is a new landing, settled anew
    // (a settlement reversed stays reversed: the journal is never edited).
    const again = await db.transaction((tx) => observe(tx, [paid(far, a)], far));
    expect(again.landings).toMatchObject([{ blockNumber: Number(far), blockHash: a, status: "settled" }]);
    const rows = await db.select().from(chainLandings).where(and(eq(chainLandings.chainId, CHAIN_ID), eq(chainLandings.blockNumber, Number(far))));
    expect(rows.map((r) => r.status).sort()).toEqual(["removed", "settled"]);

    // A reorg found at the follower's cursor checks what was recorded after its rewind point, but a block past the
    // head of the node it reads (one lagging the node the landing was read from) says nothing: it is left for later.
    const snapshot = await rpc<Hex>("evm_snapshot");
    await rpc("anvil_mine", [toHex(1)]);
    await followed(CHAIN_ID);
    await rpc("evm_revert", [snapshot]);
    await rpc("anvil_mine", [toHex(2)]);
    expect((await followed(CHAIN_ID)).reorgs.length).toBeGreaterThan(0);
    expect(await db.select({ status: chainLandings.status }).from(chainLandings).where(eq(chainLandings.id, again.landings[0]!.id))).toEqual([{ status: "settled" }]);
    read.set(Number(far), b);
    expect((await check()) as LandingRow[]).toMatchObject([{ id: again.landings[0]!.id, status: "removed" }]);
  });

  it("records, settles and removes a first pass's hundreds of events in one transaction (statements bounded, PGlite too)", async () => {
    const db = await getDb();
    const [pair] = ourPaymasters(chain);
    const from = 20_000_000n; // past anything this chain mines in the test
    const events: PaidOp[] = Array.from({ length: 700 }, (_, i) => ({
      chainId: CHAIN_ID,
      entryPoint: pair!.entryPoint,
      paymaster: pair!.paymaster,
      userOpHash: keccak256(toHex(`many ${i}`)),
      sender: privateKeyToAccount(generatePrivateKey()).address,
      nonce: BigInt(i),
      success: true,
      actualGasCost: 1n,
      actualGasUsed: 1n,
      transactionHash: keccak256(toHex(`many tx ${i >> 4}`)),
      blockNumber: from + BigInt(i >> 4),
      blockHash: keccak256(toHex(`many block ${i >> 4}`)),
      logIndex: i & 15,
    }));
    const observed = await db.transaction((tx) => observe(tx, events, from + 100n));
    expect(observed.landings).toHaveLength(700);
    expect(observed.settled).toBe(700);
    const removed = await db.transaction((tx) => removeLandings(tx, observed.landings.map((l) => l.id)));
    expect(removed).toHaveLength(700);
    const rows = await db.select().from(chainLandings).where(and(eq(chainLandings.chainId, CHAIN_ID), gte(chainLandings.blockNumber, Number(from))));
    expect(rows.filter((r) => r.status !== "removed")).toEqual([]);
  }, 60_000);

  it("reverses a deposit credited in a block that left the chain", async () => {
    const key = project.keys.test.secret;
    const ctx = { projectId: project.id, livemode: false };
    const db = await getDb();
    const owner = privateKeyToAccount(generatePrivateKey());
    const { body } = await call("GET", "/v1/settings/developer_accounts/message_to_sign", { key, query: { address: owner.address } });
    const added = await call("POST", "/v1/settings/developer_accounts", { key, json: { address: owner.address, signature: await owner.signMessage({ message: body.message }) } });
    expect(added.status, JSON.stringify(added.body)).toBe(200);
    await rpc("anvil_setBalance", [owner.address, toHex(parseEther("10"))]);
    await followed(CHAIN_ID);
    const before = await balanceOf(db, ctx, CHAIN_ID);

    const snapshot = await rpc<Hex>("evm_snapshot");
    const { walletClient } = await import("@/lib/chain/clients");
    const hash = await walletClient(chain, owner).writeContract({ address: serviceDeployment().entryPoint, abi: entryPointAbi, functionName: "depositTo", args: [serviceDeployment().paymaster], value: parseEther("0.5") });
    await publicClient(chain).waitForTransactionReceipt({ hash });
    const credited = await followed(CHAIN_ID);
    expect(credited.deposits.filter((d) => d.outcome === "credited")).toHaveLength(1);
    expect((await balanceOf(db, ctx, CHAIN_ID)).credited).toBe(before.credited + parseEther("0.5"));

    await rpc("evm_revert", [snapshot]);
    await rpc("anvil_mine", [toHex(3)]);
    await followed(CHAIN_ID);
    expect((await balanceOf(db, ctx, CHAIN_ID)).credited).toBe(before.credited);
    const entries = await db.select().from(sponsorshipEntries).where(and(eq(sponsorshipEntries.projectId, project.id), eq(sponsorshipEntries.cause, "deposit")));
    expect(entries.map((e) => e.kind).sort()).toEqual(["credit", "reversal"]);
    expect(entries.find((e) => e.kind === "reversal")!.reverses).toBe(entries.find((e) => e.kind === "credit")!.id);
  }, 120_000);
});

describe("reconciliation", () => {
  it("finds the books equal to the chain after the reorgs, then an operation our paymaster paid that no signature of ours answers for", async () => {
    const db = await getDb();
    await followed(CHAIN_ID);
    const reconcile = async () => (await runAdminCommand(db, sponsorshipCommand("reconcile", { chain: String(CHAIN_ID) }))) as ChainReconciliation;
    const clean = await reconcile();
    expect(clean).toMatchObject({ chainId: CHAIN_ID, fromBlock: 0, balanced: true, staleHolds: { count: 0 } });
    const v06 = clean.paymasters.find((p) => p.version === "0.6")!;
    // The reorged landing is not counted; its landing again is, once.
    expect(v06.chain.events).toBeGreaterThanOrEqual(2);
    expect(v06.settledWei).toBe(v06.chain.wei);
    for (const p of clean.paymasters) expect(p).toMatchObject({ mismatchWei: "0", unattributed: { events: 0 }, missing: { events: 0 } });
    expect(describeReconciliation(clean)).toMatch(/The ledger is the chain\./);

    // Signed with our paymaster's key outside any record (a leaked signer key would do this, or a bug): paid, unattributed.
    const bundle = await submitUserOperations(chain, [await signedOp(chain, freshAccount(), { callData: "0x", sponsored: true })]);
    const cost = bundle.included[0]!.receipt.actualGasCost;
    await followed(CHAIN_ID);
    const found = await reconcile();
    const paid = found.paymasters.find((p) => p.version === "0.6")!;
    expect(found.balanced).toBe(false);
    expect(paid).toMatchObject({ unattributed: { events: 1, wei: cost.toString() }, mismatchWei: "0" });
    expect(paid.unattributed.sample[0]).toMatchObject({ userOpHash: bundle.included[0]!.userOpHash.toLowerCase(), actualGasCost: cost.toString() });
    expect(describeReconciliation(found)).toMatch(/unattributed \(the operator's\): 0x[0-9a-f]{64}.*NOT BALANCED/s);

    // The background function records it: /readyz degraded naming the chain, /metrics counting the unattributed wei.
    vi.stubEnv("SPONSORSHIP_RECONCILE", "true");
    try {
      const { result } = await new InngestTestEngine({ function: reconcileSponsorship, events: [{ name: CRON_EVENT, data: { cron: "*/5 * * * *" } }] }).execute();
      expect((result as { chains: { chainId: number; balanced: boolean }[] }).chains).toContainEqual({ chainId: CHAIN_ID, balanced: false });
    } finally {
      vi.unstubAllEnvs();
    }
    await new Promise((r) => setTimeout(r, 1100)); // past the cached answer of an earlier probe
    const ready = await (await readyRoute()).json();
    expect(ready.checks.reconciliation).toMatchObject({ ok: false, unbalanced: [String(CHAIN_ID)] });
    expect(ready.status).not.toBe("ready");
    const metrics = (await scrapeMetrics()).body;
    expect(metrics).toContain(`sponsorship_unattributed_wei_total{chain="${CHAIN_ID}"} ${cost}`);
    expect(metrics).toMatch(new RegExp(`sponsorship_reconcile_mismatch_wei\\{chain="${CHAIN_ID}",paymaster="0x[0-9a-f]{40}"\\} 0`));
  }, 120_000);
});
