import { encodeFunctionData, parseEther, parseGwei, toHex, type Address, type Hex } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { and, eq } from "drizzle-orm";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { entryPointAbi, smartAccountAbi } from "@/contracts/artifacts";
import { accountFactoryCall, accountSalt } from "@/lib/chain/accounts";
import { serviceDeployment } from "@/lib/chain/contracts";
import { estimateUserOperation, signUserOperation, toEntryPointOp, type UserOp } from "@/lib/chain/userop";
import { getDb } from "@/lib/db/client";
import { sponsoredOperations } from "@/lib/db/schema";
import { serializeUserOp } from "@/lib/intent-records/userop-json";
import type { ProjectWithKeys } from "@/lib/projects/service";
import { call, newProject } from "./helpers/api";
import { chainOf, clientOf, fundedWallet, mined } from "./helpers/chain";

/**
 * Our ERC-7677 service signs only bounded operations of the project's own accounts, and records what it signs: the
 * drain of issue 29 (a public key, a garbage or foreign sender, huge preVerificationGas and priority fee, handleOps
 * with the attacker as beneficiary) is refused and the paymaster's deposit stays as it was.
 */
let project: ProjectWithKeys;
let other: ProjectWithKeys;
const d = () => serviceDeployment();
const chain = () => chainOf(31337);
const MAX = `0x${"f".repeat(64)}`;

const rpc = (method: string, params: unknown[], pk = project.keys.test.publishable) =>
  call("POST", `/v1/paymaster_service/${pk}`, { json: { jsonrpc: "2.0", id: 1, method, params } });
const json = (path: string, body: unknown, p = project) => call("POST", path, { key: p.keys.test.secret, json: body });

/** A pay_for_user policy on 31337 allowing every call of every contract, with no gas rule: the policy. */
async function openPolicy(extra: Record<string, unknown> = {}, p = project) {
  const policy = await json("/v1/policies", { name: "open", chainId: 31337, strategy: { sponsorSchema: "pay_for_user" }, ...extra }, p);
  expect(policy.status, JSON.stringify(policy.body)).toBe(200);
  const rule = await json("/v1/policy_rules", { policy: policy.body.id, type: "contract_functions", wildcard: true, functionName: "All functions" }, p);
  expect(rule.status, JSON.stringify(rule.body)).toBe(200);
  return policy.body.id as string;
}

/** A counterfactual account of a new player, owned by a key the test holds, and the initCode that deploys it. */
async function ownAccount(p = project) {
  const owner = privateKeyToAccount(generatePrivateKey());
  const res = await json("/v1/accounts", { chainId: 31337, externalOwnerAddress: owner.address }, p);
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  const { initCode } = accountFactoryCall(owner.address, accountSalt(res.body.player.id));
  return { owner, address: res.body.address as Address, playerId: res.body.player.id as string, initCode };
}

const ping = (to: Address) => encodeFunctionData({ abi: smartAccountAbi, functionName: "execute", args: [to, 0n, "0x"] });

/** The op as a well-behaved client builds it: its gas from an estimate (as a bundler's would be). */
async function clientOp(sender: Address, initCode: Hex, nonceKey = 0n): Promise<UserOp> {
  const { op } = await estimateUserOperation(chain(), { sender, initCode, callData: ping(privateKeyToAccount(generatePrivateKey()).address), sponsored: true, nonceKey });
  return { ...op, paymasterAndData: "0x", signature: "0x" };
}

/** The op as a client sends it (hex quantities). */
const wire = serializeUserOp;

const paymasterDeposit = () => clientOf(31337).readContract({ address: d().entryPoint, abi: entryPointAbi, functionName: "balanceOf", args: [d().paymaster] });

beforeAll(async () => {
  project = await newProject("paymaster bounds");
  other = await newProject("paymaster bounds, another project");
});
afterEach(() => {
  delete process.env.SPONSOR_MAX_COST_WEI;
});

describe("the ERC-7677 service's bounds", () => {
  it("refuses the drain: a garbage or foreign sender, any gas field over its bound; handleOps with what it gave reverts and the deposit is unchanged", async () => {
    const policy = await openPolicy();
    const before = await paymasterDeposit();
    const ask = (op: Record<string, unknown>, method = "pm_getPaymasterData") => rpc(method, [op, d().entryPoint, "0x7a69", { policy }]);

    // The op: sender 0x1111…, a garbage initCode, every gas field 2^256-1.
    const garbage = { sender: `0x${"1".repeat(40)}`, nonce: "0x0", initCode: "0xdeadbeef", callData: ping(d().paymaster), callGasLimit: MAX, verificationGasLimit: MAX, preVerificationGas: MAX, maxFeePerGas: MAX, maxPriorityFeePerGas: MAX };
    for (const method of ["pm_getPaymasterStubData", "pm_getPaymasterData"]) {
      const refused = (await ask(garbage, method)).body;
      expect(refused.result).toBeUndefined();
      expect(refused.error).toMatchObject({ code: -32003, message: expect.stringMatching(/not an account of this project/) });
    }

    // Another project's account, with a real initCode and sane gas.
    const foreign = await ownAccount(other);
    const foreignOp = await clientOp(foreign.address, foreign.initCode);
    expect((await ask(wire(foreignOp))).body.error).toMatchObject({ code: -32003, message: expect.stringContaining(foreign.address) });

    // The project's own account: each gas field alone over its bound is refused, naming the field and the bound.
    const mine = await ownAccount();
    const good = await clientOp(mine.address, mine.initCode);
    const huge: Record<string, bigint> = {
      callGasLimit: 30_000_000n,
      verificationGasLimit: 30_000_000n,
      preVerificationGas: 10_000_000n,
      maxFeePerGas: parseGwei("10000"),
      maxPriorityFeePerGas: parseGwei("1000"),
    };
    for (const [field, value] of Object.entries(huge)) {
      const { error } = (await ask({ ...wire(good), [field]: toHex(value), ...(field === "maxPriorityFeePerGas" && { maxFeePerGas: toHex(value) }) })).body;
      const named = field === "maxPriorityFeePerGas" ? "maxFeePerGas" : field;
      expect(error, field).toMatchObject({ code: -32602, message: expect.stringContaining(`userOperation.${named}`), data: { field: named } });
      expect(BigInt(error.data.bound)).toBeLessThan(value);
    }
    const tipOnly = (await ask({ ...wire(good), maxPriorityFeePerGas: toHex(good.maxPriorityFeePerGas * 10n) })).body.error;
    expect(tipOnly).toMatchObject({ code: -32602, data: { field: "maxPriorityFeePerGas" } });

    // The attacker bundles the op anyway, with the stub (all it got) and its own beneficiary: the EntryPoint refuses it.
    const drain: UserOp = { ...good, preVerificationGas: huge.preVerificationGas!, maxFeePerGas: huge.maxFeePerGas!, maxPriorityFeePerGas: huge.maxPriorityFeePerGas! };
    const stub = (await ask(wire(drain), "pm_getPaymasterStubData")).body.result.paymasterAndData as Hex;
    const signed = await signUserOperation(chain(), { ...drain, paymasterAndData: stub }, mine.owner);
    const attacker = await fundedWallet(31337);
    const beneficiary = privateKeyToAccount(generatePrivateKey()).address;
    await expect(
      attacker.writeContract({ address: d().entryPoint, abi: entryPointAbi, functionName: "handleOps", args: [[toEntryPointOp(signed)], beneficiary], gas: 5_000_000n }).then((hash) => mined(31337, hash)),
    ).rejects.toThrow();
    expect(await clientOf(31337).getBalance({ address: beneficiary })).toBe(0n);
    expect(await paymasterDeposit()).toBe(before);
    const rows = await (await getDb()).select().from(sponsoredOperations).where(eq(sponsoredOperations.policyId, policy));
    expect(rows).toEqual([]);
  }, 120_000);

  it("signs a bounded op of the project's account, which lands for at most its recorded cost; interval rules count it; the default cap applies without a gas rule", async () => {
    const policy = await openPolicy();
    const mine = await ownAccount();
    const op = await clientOp(mine.address, mine.initCode);
    const params = (o: UserOp) => [wire(o), d().entryPoint, "0x7a69", { policy }];

    // Without a gas_per_transaction rule the install's cap applies (here lowered to 1000 wei), naming its setting.
    process.env.SPONSOR_MAX_COST_WEI = "1000";
    expect((await rpc("pm_getPaymasterData", params(op))).body.error).toMatchObject({ code: -32003, message: expect.stringMatching(/SPONSOR_MAX_COST_WEI/) });
    delete process.env.SPONSOR_MAX_COST_WEI;

    // Asked twice for the same nonce (as a client retrying would): one record, replaced.
    expect((await rpc("pm_getPaymasterData", params(op))).body.result).toBeDefined();
    const answer = (await rpc("pm_getPaymasterData", params(op))).body;
    expect(answer.error).toBeUndefined();
    const sponsored = await signUserOperation(chain(), { ...op, paymasterAndData: answer.result.paymasterAndData }, mine.owner);
    const before = await paymasterDeposit();
    const bundler = await fundedWallet(31337);
    await mined(31337, await bundler.writeContract({ address: d().entryPoint, abi: entryPointAbi, functionName: "handleOps", args: [[toEntryPointOp(sponsored)], bundler.account.address] }));
    const [record] = await (await getDb())
      .select()
      .from(sponsoredOperations)
      .where(and(eq(sponsoredOperations.policyId, policy), eq(sponsoredOperations.sender, mine.address.toLowerCase())));
    expect(record).toMatchObject({ projectId: project.id, livemode: false, chainId: 31337, playerId: mine.playerId, nonce: "0" });
    const spent = before - (await paymasterDeposit());
    expect(spent).toBeGreaterThan(0n);
    expect(spent).toBeLessThanOrEqual(BigInt(record!.maxCost));

    // Now deployed, the op's initCode is refused; a count_per_interval rule counts the one record for the player.
    expect((await rpc("pm_getPaymasterData", params(op))).body.error.message).toMatch(/already deployed/);
    const rule = await json("/v1/policy_rules", { policy, type: "rate_limit", functionName: "count_per_interval", countLimit: 1, timeIntervalType: "minute", timeIntervalValue: 5 });
    const next = await clientOp(mine.address, "0x");
    expect((await rpc("pm_getPaymasterData", params(next))).body.error).toMatchObject({ code: -32003, message: expect.stringMatching(/1 sponsored transaction/) });
    await call("DELETE", `/v1/policy_rules/${rule.body.id}`, { key: project.keys.test.secret });
    expect((await rpc("pm_getPaymasterData", params(next))).body.result).toBeDefined();

    // A gas_per_transaction rule of the policy's own replaces the install's cap.
    const capped = await openPolicy();
    await json("/v1/policy_rules", { policy: capped, type: "rate_limit", functionName: "gas_per_transaction", gasLimit: parseEther("1").toString() });
    process.env.SPONSOR_MAX_COST_WEI = "1000";
    expect((await rpc("pm_getPaymasterData", [wire(next), d().entryPoint, "0x7a69", { policy: capped }])).body.result).toBeDefined();
  }, 120_000);

  it("sponsors outside accounts only under a policy that opts in", async () => {
    const foreign = await ownAccount(other);
    const op = await clientOp(foreign.address, foreign.initCode);
    const closed = await openPolicy();
    expect((await rpc("pm_getPaymasterData", [wire(op), d().entryPoint, "0x7a69", { policy: closed }])).body.error).toMatchObject({ code: -32003 });
    const open = await openPolicy({ sponsorOutsideAccounts: true });
    const res = await call("GET", `/v1/policies/${open}`, { key: project.keys.test.secret });
    expect(res.body.sponsorOutsideAccounts).toBe(true);
    const answer = (await rpc("pm_getPaymasterData", [wire(op), d().entryPoint, "0x7a69", { policy: open }])).body;
    expect(answer.error).toBeUndefined();
    const [record] = await (await getDb()).select().from(sponsoredOperations).where(eq(sponsoredOperations.policyId, open));
    expect(record).toMatchObject({ projectId: project.id, accountId: null, playerId: null, sender: foreign.address.toLowerCase() });
  }, 120_000);
});
