import { eq } from "drizzle-orm";
import { decodeAbiParameters, encodeFunctionData, http, parseEther, slice, toHex, type Hex } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { createBundlerClient, createPaymasterClient } from "viem/account-abstraction";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { entryPointAbi, smartAccountAbi } from "@/contracts/artifacts";
import { accountFactoryCall, accountSalt } from "@/lib/chain/accounts";
import { serviceDeployment } from "@/lib/chain/contracts";
import { estimateUserOperation, signUserOperation, toEntryPointOp, userOperationHash } from "@/lib/chain/userop";
import { getDb } from "@/lib/db/client";
import { chainCursors, chainLandings, paymasterSignatures, sponsoredOperations, sponsorshipEntries, sponsorshipHolds } from "@/lib/db/schema";
import { takeRemoteCallsInTransactions } from "@/lib/db/transaction-guard";
import { serializeUserOp } from "@/lib/intent-records/userop-json";
import type { ProjectWithKeys } from "@/lib/projects/service";
import { FOLLOWER_CURSOR } from "@/lib/sponsorship/attribution";
import { balanceOf, credit } from "@/lib/sponsorship/ledger";
import { startAlto, type AltoBundler } from "./helpers/alto";
import { call, newProject } from "./helpers/api";
import { chainOf, clientOf, fundedWallet } from "./helpers/chain";
import { followed } from "./helpers/follow";
import { routeServer } from "./helpers/sdk-server";
import { viemSmartAccount } from "./helpers/viem-account";

process.env.TRANSACTION_GUARD = "1"; // read when this process opens its database: remote calls inside transactions are recorded

/**
 * Operations our paymaster signs for outside clients over ERC-7677 hold their most cost on the project's balance; the
 * chain follower settles the hold at the op's actualGasCost when it lands (by any bundler), and releases it once the
 * chain has passed its sponsorship window without it.
 */
let alto: AltoBundler;
let server: Awaited<ReturnType<typeof routeServer>>;
let project: ProjectWithKeys;
const d = () => serviceDeployment();

beforeAll(async () => {
  project = await newProject("sponsorship ERC-7677 settlement");
  server = await routeServer();
  alto = await startAlto({ rpcUrl: chainOf(31337).rpcUrl, entryPoint: d().entryPoint });
}, 120_000);
afterAll(async () => {
  await alto?.stop();
  await server?.close();
});
beforeEach(({ onTestFailed }) => {
  onTestFailed(() => console.log(`alto's output:\n${alto.output().slice(-6_000)}`));
});
afterEach(() => {
  expect(takeRemoteCallsInTransactions()).toEqual([]);
});

const json = (key: string, path: string, body: unknown) => call("POST", path, { key, json: body });

/** A pay_for_user policy on the chain sponsoring every call, with its mode's secret key. */
async function openPolicy(key: string, chainId: number) {
  const policy = await json(key, "/v1/policies", { name: "open", chainId, strategy: { sponsorSchema: "pay_for_user" } });
  expect(policy.status, JSON.stringify(policy.body)).toBe(200);
  const rule = await json(key, "/v1/policy_rules", { policy: policy.body.id, type: "contract_functions", wildcard: true, functionName: "All functions" });
  expect(rule.status, JSON.stringify(rule.body)).toBe(200);
  return policy.body.id as string;
}

/** Follows the chain to its head, all passes' work together. */
const landingsCaughtUp = followed;

const holdOf = async (sponsoredOperationId: string) =>
  (await getDb()).select().from(sponsorshipHolds).where(eq(sponsorshipHolds.sponsoredOperationId, sponsoredOperationId));
const holdById = async (id: string) => (await (await getDb()).select().from(sponsorshipHolds).where(eq(sponsorshipHolds.id, id)))[0]!;
const journalOf = async (holdId: string) =>
  (await (await getDb()).select().from(sponsorshipEntries).where(eq(sponsorshipEntries.holdId, holdId))).map((e) => ({ kind: e.kind, amount: e.amount, cause: e.cause })).sort((a, b) => a.kind.localeCompare(b.kind));
const operationOf = async (hash: Hex) => {
  const [row] = await (await getDb()).select().from(sponsoredOperations).where(eq(sponsoredOperations.userOperationHash, hash.toLowerCase()));
  expect(row, `a sponsored_operations row for ${hash}`).toBeDefined();
  return row!;
};

describe("ERC-7677 operations on the ledger", () => {
  it("settles the hold of an operation our pm_getPaymasterData signed, landed by an outside bundler, at its actualGasCost, once", async () => {
    const key = project.keys.test.secret;
    const ctx = { projectId: project.id, livemode: false };
    const db = await getDb();
    const policy = await openPolicy(key, 31337);
    const account = await viemSmartAccount(key);
    const before = await balanceOf(db, ctx, 31337);
    const bundler = createBundlerClient({
      account,
      client: account.client,
      transport: http(alto.url),
      paymaster: createPaymasterClient({ transport: http(`${server.url}/v1/paymaster_service/${project.keys.test.publishable}`) }),
      paymasterContext: { policy },
    });
    const hash = (await bundler.sendUserOperation({ calls: [{ to: privateKeyToAccount(generatePrivateKey()).address, value: 0n, data: "0x" as Hex }] })) as Hex;
    const receipt = await bundler.waitForUserOperationReceipt({ hash, timeout: 60_000 });
    expect(receipt).toMatchObject({ success: true, paymaster: d().paymaster });

    // pm_getPaymasterData held the op's most cost (its required prefund) until the end of its sponsorship window.
    const operation = await operationOf(hash);
    const [held] = await holdOf(operation.id);
    expect(held).toMatchObject({ status: "held", cause: "erc7677", projectId: project.id, livemode: false, chainId: 31337, amount: operation.maxCost, policyId: policy });
    // Its window had not ended when it landed.
    const landedAt = Number((await clientOf(31337).getBlock({ blockNumber: receipt.receipt.blockNumber })).timestamp);
    expect(held!.expiresAt!.getTime()).toBeGreaterThanOrEqual(landedAt * 1000);
    const amount = BigInt(operation.maxCost);
    const cost = receipt.actualGasCost;
    expect(cost).toBeGreaterThan(0n);
    expect(cost).toBeLessThan(amount);
    expect((await balanceOf(db, ctx, 31337)).held).toBe(before.held + amount);

    // The follower reads the EntryPoint's UserOperationEvent and settles the hold at its actualGasCost.
    const summary = await landingsCaughtUp(31337);
    expect(summary.settled).toBeGreaterThanOrEqual(1);
    expect(await holdById(held!.id)).toMatchObject({ status: "settled", settledAmount: cost.toString() });
    const [landing] = await db.select().from(chainLandings).where(eq(chainLandings.userOperationHash, hash.toLowerCase()));
    expect(landing).toMatchObject({ status: "settled", holdId: held!.id, projectId: project.id, actualGasCost: cost.toString(), paymaster: d().paymaster.toLowerCase() });
    const after = await balanceOf(db, ctx, 31337);
    expect(after).toMatchObject({ held: before.held, settled: before.settled + cost, credited: before.credited, available: before.available - cost });
    const journal = [
      { kind: "hold", amount: amount.toString(), cause: "erc7677" },
      { kind: "release", amount: (amount - cost).toString(), cause: "erc7677" },
      { kind: "settle", amount: cost.toString(), cause: "erc7677" },
    ];
    expect(await journalOf(held!.id)).toEqual(journal);

    // Read again, from a fresh cursor too (a restart): settled once.
    await db.delete(chainCursors).where(eq(chainCursors.name, FOLLOWER_CURSOR));
    await landingsCaughtUp(31337);
    expect(await journalOf(held!.id)).toEqual(journal);
    expect(await balanceOf(db, ctx, 31337)).toEqual(after);
  }, 120_000);

  it("holds the costlier of two signatures for one nonce, and settles it when the first lands: a client that asked twice and landed the first", async () => {
    const key = project.keys.test.secret;
    const ctx = { projectId: project.id, livemode: false };
    const db = await getDb();
    const policy = await openPolicy(key, 31337);
    const owner = privateKeyToAccount(generatePrivateKey());
    const created = await json(key, "/v1/accounts", { chainId: 31337, externalOwnerAddress: owner.address });
    const { initCode } = accountFactoryCall(owner.address, accountSalt(created.body.player.id));
    const callData = encodeFunctionData({ abi: smartAccountAbi, functionName: "execute", args: [privateKeyToAccount(generatePrivateKey()).address, 0n, "0x"] });
    const { op } = await estimateUserOperation(chainOf(31337), { sender: created.body.address, initCode, callData, sponsored: true, nonceKey: 0n });
    const ask = async (fee: bigint) => {
      const unsigned = { ...op, maxPriorityFeePerGas: fee, maxFeePerGas: op.maxFeePerGas, paymasterAndData: "0x" as Hex, signature: "0x" as Hex };
      const res = await call("POST", `/v1/paymaster_service/${project.keys.test.publishable}`, {
        json: { jsonrpc: "2.0", id: 1, method: "pm_getPaymasterData", params: [serializeUserOp(unsigned), d().entryPoint, toHex(31337), { policy }] },
      });
      expect(res.body.result, JSON.stringify(res.body)).toBeDefined();
      return signUserOperation(chainOf(31337), { ...unsigned, paymasterAndData: res.body.result.paymasterAndData }, owner);
    };
    const first = await ask(op.maxPriorityFeePerGas);
    const second = await ask(op.maxPriorityFeePerGas - 1n);
    expect(userOperationHash(chainOf(31337), first)).not.toBe(userOperationHash(chainOf(31337), second));
    const operation = await operationOf(userOperationHash(chainOf(31337), second));
    // One hold for the operation, with both signatures: either may land, so it holds the costlier, never less.
    const holds = await holdOf(operation.id);
    expect(holds.map((h) => h.status)).toEqual(["held"]);
    const live = holds[0]!;
    const signatures = await db.select().from(paymasterSignatures).where(eq(paymasterSignatures.holdId, live.id));
    expect(signatures.map((g) => g.userOperationHash).sort()).toEqual([userOperationHash(chainOf(31337), first), userOperationHash(chainOf(31337), second)].map((h) => h.toLowerCase()).sort());
    expect(BigInt(live.amount)).toBe(signatures.map((g) => BigInt(g.maxCost)).reduce((a, b) => (a > b ? a : b)));

    // The first signature lands (an outside bundler's handleOps): its hash is no longer the record's, its sender and nonce are.
    const wallet = await fundedWallet(31337);
    const sent = await wallet.writeContract({ address: d().entryPoint, abi: entryPointAbi, functionName: "handleOps", args: [[toEntryPointOp(first)], wallet.account.address] });
    const bundle = await clientOf(31337).waitForTransactionReceipt({ hash: sent });
    const [event] = await clientOf(31337).getContractEvents({ address: d().entryPoint, abi: entryPointAbi, eventName: "UserOperationEvent", blockHash: bundle.blockHash, args: { sender: first.sender } });
    const cost = event!.args.actualGasCost!;

    const balance = await balanceOf(db, ctx, 31337);
    await landingsCaughtUp(31337);
    expect(await holdById(live.id)).toMatchObject({ status: "settled", settledAmount: cost.toString() });
    // The second signature can no longer land (its nonce is used): dead, nothing left held for it.
    const after = await db.select().from(paymasterSignatures).where(eq(paymasterSignatures.holdId, live.id));
    expect(after.map((g) => [g.userOperationHash, g.status]).sort()).toEqual(
      [
        [userOperationHash(chainOf(31337), first).toLowerCase(), "landed"],
        [userOperationHash(chainOf(31337), second).toLowerCase(), "dead"],
      ].sort(),
    );
    expect(await balanceOf(db, ctx, 31337)).toMatchObject({ held: balance.held - BigInt(live.amount), settled: balance.settled + cost });
  }, 60_000);

  // On the live chain 31339, whose clock tests move forward (test/account-actions.test.ts too).
  it("releases a hold once the chain has passed its sponsorship window without the operation, which can then no longer land", async () => {
    const key = project.keys.live.secret;
    const ctx = { projectId: project.id, livemode: true };
    const db = await getDb();
    const chain = chainOf(31339);
    const client = clientOf(31339);
    // Live mode starts at zero: funded by an audited credit.
    await credit(db, ctx, { chainId: 31339, amount: parseEther("1"), cause: "funding", reference: "test" });
    const policy = await openPolicy(key, 31339);
    const owner = privateKeyToAccount(generatePrivateKey());
    const created = await json(key, "/v1/accounts", { chainId: 31339, externalOwnerAddress: owner.address });
    expect(created.status, JSON.stringify(created.body)).toBe(200);
    const { initCode } = accountFactoryCall(owner.address, accountSalt(created.body.player.id));
    const callData = encodeFunctionData({ abi: smartAccountAbi, functionName: "execute", args: [privateKeyToAccount(generatePrivateKey()).address, 0n, "0x"] });
    const { op } = await estimateUserOperation(chain, { sender: created.body.address, initCode, callData, sponsored: true, nonceKey: 0n });
    const unsigned = { ...op, paymasterAndData: "0x" as Hex, signature: "0x" as Hex };
    const res = await call("POST", `/v1/paymaster_service/${project.keys.live.publishable}`, {
      json: { jsonrpc: "2.0", id: 1, method: "pm_getPaymasterData", params: [serializeUserOp(unsigned), d().entryPoint, toHex(31339), { policy }] },
    });
    expect(res.body.result, JSON.stringify(res.body)).toBeDefined();
    const paymasterAndData = res.body.result.paymasterAndData as Hex;
    const [validUntil] = decodeAbiParameters([{ type: "uint48" }, { type: "uint48" }], slice(paymasterAndData, 20, 84));
    const signed = await signUserOperation(chain, { ...unsigned, paymasterAndData }, owner);
    const operation = await operationOf(userOperationHash(chain, signed));
    const [held] = await holdOf(operation.id);
    expect(held).toMatchObject({ status: "held", cause: "erc7677", livemode: true, chainId: 31339, amount: operation.maxCost });
    expect(held!.expiresAt!.getTime()).toBe(validUntil * 1000);
    const funded = await balanceOf(db, ctx, 31339);
    expect(funded.held).toBe(BigInt(operation.maxCost));

    const timeOf = async (blockNumber: number) => Number((await client.getBlock({ blockNumber: BigInt(blockNumber) })).timestamp);
    const mineAt = async (timestamp: number) => {
      await client.request({ method: "evm_setNextBlockTimestamp" as never, params: [toHex(timestamp)] as never });
      await client.request({ method: "evm_mine" as never, params: [] as never });
    };

    // Within its window, and at its last second (an op may still land in a block stamped validUntil): kept.
    const within = await landingsCaughtUp(31339);
    const last = Number((await client.getBlock()).timestamp);
    if (last < validUntil) {
      expect(await timeOf(within.toBlock ?? Number(await client.getBlockNumber()))).toBeLessThan(validUntil);
      expect(within.released).not.toContain(held!.id);
      expect((await holdById(held!.id)).status).toBe("held");
      await mineAt(validUntil);
      const atEnd = await landingsCaughtUp(31339);
      if ((await timeOf(atEnd.toBlock!)) === validUntil) {
        expect(atEnd.released).not.toContain(held!.id);
        expect((await holdById(held!.id)).status).toBe("held");
      }
    }

    // A block past it: released whole, and the balance has it back.
    await client.request({ method: "evm_increaseTime" as never, params: [toHex(1)] as never });
    await client.request({ method: "evm_mine" as never, params: [] as never });
    const passed = await landingsCaughtUp(31339);
    expect(await timeOf(passed.toBlock!)).toBeGreaterThan(validUntil);
    expect(passed.released).toContain(held!.id);
    expect(await holdById(held!.id)).toMatchObject({ status: "released", settledAmount: null });
    expect(await journalOf(held!.id)).toEqual([
      { kind: "hold", amount: operation.maxCost, cause: "erc7677" },
      { kind: "release", amount: operation.maxCost, cause: "erc7677" },
    ]);
    expect(await balanceOf(db, ctx, 31339)).toMatchObject({ held: 0n, settled: 0n, available: parseEther("1") });

    // Which was right: the EntryPoint now refuses the signed op (its paymaster's signature expired).
    const wallet = await fundedWallet(31339);
    await expect(client.simulateContract({ account: wallet.account, address: d().entryPoint, abi: entryPointAbi, functionName: "handleOps", args: [[toEntryPointOp(signed)], wallet.account.address] })).rejects.toThrow(
      /AA32/,
    );
  }, 60_000);
});
