import { and, eq } from "drizzle-orm";
import { encodeFunctionData, toHex, type Address, type Hex } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { beforeAll, describe, expect, it } from "vitest";
import { entryPointAbi, smartAccountAbi } from "@/contracts/artifacts";
import { accountFactoryCall, accountSalt, counterfactualAddress } from "@/lib/chain/accounts";
import { serviceDeployment } from "@/lib/chain/contracts";
import { estimateUserOperation, signUserOperation, toEntryPointOp, userOperationHash, type UserOp } from "@/lib/chain/userop";
import { getDb } from "@/lib/db/client";
import { chainLandings, paymasterSignatures, sponsoredOperations, sponsorshipHolds } from "@/lib/db/schema";
import { deserializeUserOp, serializeUserOp } from "@/lib/intent-records/userop-json";
import { cancelUnsigned } from "@/lib/intents/land-intent";
import type { ProjectWithKeys } from "@/lib/projects/service";
import { balanceOf } from "@/lib/sponsorship/ledger";
import { call, newProject } from "./helpers/api";
import { wildcardPolicy } from "./helpers/bundler-fixtures";
import { chainOf, clientOf, fundedWallet, mined } from "./helpers/chain";
import { followed } from "./helpers/follow";
import { eventually, intentRow } from "./helpers/relay-fixtures";

/**
 * The books follow the chain (issue 40): what an attacker holding the publishable key, or an owner holding our
 * paymaster's signature on its own op, can do to the ledger. Every signature of ours is a record whose hold lasts until
 * it can no longer land; every landing is charged once, whoever sent it.
 */
let project: ProjectWithKeys;
const d = () => serviceDeployment();
const ctx = () => ({ projectId: project.id, livemode: false });

beforeAll(async () => {
  project = await newProject("chain books");
});

const rpc = (method: string, params: unknown[]) =>
  call("POST", `/v1/paymaster_service/${project.keys.test.publishable}`, { json: { jsonrpc: "2.0", id: 1, method, params } });

/** A counterfactual account of an owner-held player, and a first op (deploying it) with gas and fees as the service estimates them. */
async function firstOp() {
  const owner = privateKeyToAccount(generatePrivateKey());
  const created = await call("POST", "/v1/accounts", { key: project.keys.test.secret, json: { chainId: 31337, externalOwnerAddress: owner.address } });
  expect(created.status, JSON.stringify(created.body)).toBe(200);
  const { initCode } = accountFactoryCall(owner.address, accountSalt(created.body.player.id));
  const callData = encodeFunctionData({ abi: smartAccountAbi, functionName: "execute", args: [privateKeyToAccount(generatePrivateKey()).address, 0n, "0x"] });
  const { op } = await estimateUserOperation(chainOf(31337), { sender: created.body.address, initCode, callData, sponsored: true, nonceKey: 0n });
  return { owner, op: { ...op, paymasterAndData: "0x" as Hex, signature: "0x" as Hex }, account: created.body };
}

/** Sends the owner's signed op through EntryPoint.handleOps from a wallet of nobody's: what anyone holding it can do. */
async function landOutside(op: UserOp): Promise<{ transactionHash: Hex; cost: bigint }> {
  const wallet = await fundedWallet(31337);
  const hash = await wallet.writeContract({ address: d().entryPoint, abi: entryPointAbi, functionName: "handleOps", args: [[toEntryPointOp(op)], wallet.account.address] });
  const receipt = await mined(31337, hash);
  const [event] = await clientOf(31337).getContractEvents({ address: d().entryPoint, abi: entryPointAbi, eventName: "UserOperationEvent", blockHash: receipt.blockHash, args: { sender: op.sender } });
  expect(event, "the op's UserOperationEvent").toBeDefined();
  return { transactionHash: hash, cost: event!.args.actualGasCost! };
}

describe("a signature of ours can never be made to hold less than it may cost", () => {
  it("refuses fees under the chain's base fee, and a second signature for a sender and nonce raises the hold, never lowers it", async () => {
    const db = await getDb();
    const policy = await wildcardPolicy(project.keys.test.secret, "re-asked");
    const { owner, op } = await firstOp();
    const before = await balanceOf(db, ctx(), 31337);
    const ask = (o: UserOp) => rpc("pm_getPaymasterData", [serializeUserOp(o), d().entryPoint, toHex(31337), { policy }]);

    const first = await ask(op);
    expect(first.body.result, JSON.stringify(first.body)).toBeDefined();
    const signedA = { ...op, paymasterAndData: first.body.result.paymasterAndData as Hex };
    const costA = (await db.select().from(paymasterSignatures).where(eq(paymasterSignatures.userOperationHash, userOperationHash(chainOf(31337), signedA).toLowerCase())))[0]!.maxCost;
    expect((await balanceOf(db, ctx(), 31337)).held).toBe(before.held + BigInt(costA));

    // The attack of the review: the same sender and nonce again, fees at 0, to bring the hold to 0.
    const free = await ask({ ...op, maxFeePerGas: 0n, maxPriorityFeePerGas: 0n });
    expect(free.body.error, JSON.stringify(free.body)).toMatchObject({ code: -32602, data: { field: "maxFeePerGas" } });
    expect(free.body.error.message).toMatch(/under this paymaster's floor/);
    expect((await balanceOf(db, ctx(), 31337)).held).toBe(before.held + BigInt(costA));

    // A cheaper op that the chain can still include: signed, but the hold stays at the costlier live signature.
    const block = await clientOf(31337).getBlock();
    const cheaper = await ask({ ...op, maxFeePerGas: block.baseFeePerGas!, maxPriorityFeePerGas: 1n });
    expect(cheaper.body.result, JSON.stringify(cheaper.body)).toBeDefined();
    const [operation] = await db.select().from(sponsoredOperations).where(and(eq(sponsoredOperations.projectId, project.id), eq(sponsoredOperations.sender, op.sender.toLowerCase())));
    const holds = await db.select().from(sponsorshipHolds).where(eq(sponsorshipHolds.sponsoredOperationId, operation!.id));
    expect(holds.map((h) => [h.status, h.amount])).toEqual([["held", costA]]);
    expect((await balanceOf(db, ctx(), 31337)).held).toBe(before.held + BigInt(costA));

    // The first signature lands, straight through handleOps: charged at its cost, the rest released, nothing left held.
    const landed = await landOutside(await signUserOperation(chainOf(31337), signedA, owner));
    await followed(31337);
    expect(await balanceOf(db, ctx(), 31337)).toMatchObject({ held: before.held, settled: before.settled + landed.cost });
    const [landing] = await db.select().from(chainLandings).where(eq(chainLandings.transactionHash, landed.transactionHash.toLowerCase()));
    expect(landing).toMatchObject({ status: "settled", projectId: project.id, holdId: holds[0]!.id, actualGasCost: landed.cost.toString() });
  }, 60_000);

  it("holds every live signature of a sender with 2D nonce keys, each its own", async () => {
    const db = await getDb();
    const policy = await wildcardPolicy(project.keys.test.secret, "2D keys");
    const { op } = await firstOp();
    const before = await balanceOf(db, ctx(), 31337);
    let held = 0n;
    for (const key of [1n, 2n, 3n]) {
      const keyed = { ...op, nonce: key << 64n };
      const res = await rpc("pm_getPaymasterData", [serializeUserOp(keyed), d().entryPoint, toHex(31337), { policy }]);
      expect(res.body.result, JSON.stringify(res.body)).toBeDefined();
      const hash = userOperationHash(chainOf(31337), { ...keyed, paymasterAndData: res.body.result.paymasterAndData });
      held += BigInt((await db.select().from(paymasterSignatures).where(eq(paymasterSignatures.userOperationHash, hash.toLowerCase())))[0]!.maxCost);
    }
    expect((await balanceOf(db, ctx(), 31337)).held).toBe(before.held + held);
  }, 60_000);
});

describe("budgets by identity", () => {
  it("a per-account budget counts an outside sender's ERC-7677 holds (held under its address), so it cannot sign past it", async () => {
    const db = await getDb();
    const key = project.keys.test.secret;
    const policy = await call("POST", "/v1/policies", { key, json: { name: "outside, budgeted", chainId: 31337, sponsorOutsideAccounts: true, strategy: { sponsorSchema: "pay_for_user" } } });
    expect(policy.status, JSON.stringify(policy.body)).toBe(200);
    await call("POST", "/v1/policy_rules", { key, json: { policy: policy.body.id, type: "contract_functions", wildcard: true, functionName: "All functions" } });
    // An account of nobody the project knows: our factory, a fresh owner.
    const owner = privateKeyToAccount(generatePrivateKey());
    const salt = generatePrivateKey();
    const { initCode } = accountFactoryCall(owner.address, salt);
    const sender = counterfactualAddress(owner.address, salt) as Address;
    const callData = encodeFunctionData({ abi: smartAccountAbi, functionName: "execute", args: [owner.address, 0n, "0x"] });
    const { op } = await estimateUserOperation(chainOf(31337), { sender, initCode, callData, sponsored: true, nonceKey: 0n });
    const ask = (nonceKey: bigint) =>
      rpc("pm_getPaymasterData", [serializeUserOp({ ...op, nonce: nonceKey << 64n, paymasterAndData: "0x", signature: "0x" }), d().entryPoint, toHex(31337), { policy: policy.body.id }]);
    const first = await ask(1n);
    expect(first.body.result, JSON.stringify(first.body)).toBeDefined();
    const [held] = await db.select().from(sponsorshipHolds).where(and(eq(sponsorshipHolds.policyId, policy.body.id), eq(sponsorshipHolds.status, "held")));
    expect(held).toMatchObject({ accountId: sender.toLowerCase(), playerId: null });
    // A budget of one and a half such operations per account: the second signature for the same sender is over it.
    const budget = await call("POST", "/v1/policy_rules", {
      key,
      json: { policy: policy.body.id, type: "budget", amount: ((BigInt(held!.amount) * 3n) / 2n).toString(), currency: "native", scope: "account", period: "total" },
    });
    expect(budget.status, JSON.stringify(budget.body)).toBe(200);
    const second = await ask(2n);
    expect(second.body.error, JSON.stringify(second.body)).toMatchObject({ code: -32003, data: { code: "budget_exhausted" } });
    expect(second.body.error.message).toContain(`account ${sender.toLowerCase()}`);
  }, 60_000);
});

describe("an owner landing its own sponsored op", () => {
  it("is charged once: the intent is landed from the chain (never cancelled), its hold settled at the op's cost", async () => {
    const key = project.keys.test.secret;
    const db = await getDb();
    const policy = await wildcardPolicy(key, "owner lands");
    const owner = privateKeyToAccount(generatePrivateKey());
    const { body: account } = await call("POST", "/v1/accounts", { key, json: { chainId: 31337, externalOwnerAddress: owner.address } });
    const to = privateKeyToAccount(generatePrivateKey()).address;
    const created = await call("POST", "/v1/transaction_intents", { key, json: { chainId: 31337, account: account.id, policy, interactions: [{ to, value: "0" }] } });
    expect(created.status, JSON.stringify(created.body)).toBe(200);
    expect(created.body.nextAction).toMatchObject({ type: "sign_with_wallet" });
    const before = await balanceOf(db, ctx(), 31337);
    const held = BigInt((await db.select().from(sponsorshipHolds).where(eq(sponsorshipHolds.intentId, created.body.id)))[0]!.amount);

    // The owner signs the op nextAction hands out, with our paymaster's signature on it, and lands it itself.
    const op = deserializeUserOp(created.body.nextAction.payload.userOperation);
    const signed = { ...op, signature: await owner.signMessage({ message: { raw: created.body.userOperationHash as Hex } }) };
    const landed = await landOutside(signed);

    const seen = await followed(31337);
    expect(seen.landedIntents).toContain(created.body.id);
    const intent = await intentRow(created.body.id);
    expect(intent).toMatchObject({ status: "successful", transactionHash: landed.transactionHash, gasCost: landed.cost.toString() });
    expect(intent.blockHash).toBe((await clientOf(31337).getTransactionReceipt({ hash: landed.transactionHash })).blockHash.toLowerCase());
    // The op that landed, with the owner's signature the service never saw: it can be sent again should a reorg drop it.
    expect(intent.userOperation.signature).toBe(signed.signature);
    expect(await balanceOf(db, ctx(), 31337)).toMatchObject({ held: before.held - held, settled: before.settled + landed.cost });

    // Its sponsorship window ends: nothing to cancel, it landed.
    expect(await cancelUnsigned(db, created.body.id)).toBe(false);
    expect((await intentRow(created.body.id)).status).toBe("successful");
    // The API shows it landed, with its receipt.
    const shown = await eventually("the intent's response", async () => {
      const res = await call("GET", `/v1/transaction_intents/${created.body.id}`, { key });
      return res.body.response ? res.body : undefined;
    });
    expect(shown.response).toMatchObject({ transactionHash: landed.transactionHash, status: 1, gasFee: landed.cost.toString() });
  }, 60_000);

  it("cancelUnsigned looks at the chain first: an op the owner landed is landed, not cancelled", async () => {
    const key = project.keys.test.secret;
    const db = await getDb();
    const policy = await wildcardPolicy(key, "cancel looks first");
    const owner = privateKeyToAccount(generatePrivateKey());
    const { body: account } = await call("POST", "/v1/accounts", { key, json: { chainId: 31337, externalOwnerAddress: owner.address } });
    const created = await call("POST", "/v1/transaction_intents", { key, json: { chainId: 31337, account: account.id, policy, interactions: [{ to: owner.address as Address, value: "0" }] } });
    const op = deserializeUserOp(created.body.nextAction.payload.userOperation);
    const landed = await landOutside({ ...op, signature: await owner.signMessage({ message: { raw: created.body.userOperationHash as Hex } }) });
    expect(await cancelUnsigned(db, created.body.id)).toBe(false);
    expect(await intentRow(created.body.id)).toMatchObject({ status: "successful", transactionHash: landed.transactionHash });
  }, 60_000);
});
