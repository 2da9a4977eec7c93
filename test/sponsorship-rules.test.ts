import { encodeFunctionData, parseEther, parseGwei, toHex, type Address } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { entryPointAbi, smartAccountAbi } from "@/contracts/artifacts";
import { accountFactoryCall, accountSalt } from "@/lib/chain/accounts";
import { serviceDeployment } from "@/lib/chain/contracts";
import { chainFees, estimateUserOperation, MIN_PRIORITY_FEE } from "@/lib/chain/userop";
import { serializeUserOp } from "@/lib/intent-records/userop-json";
import { formatUsd, usdMicros, weiToUsdMicros } from "@/lib/sponsorship/budgets";
import type { ProjectWithKeys } from "@/lib/projects/service";
import { call, expectError, newProject, waitForLanding } from "./helpers/api";
import { chainOf, clientOf } from "./helpers/chain";
import { eventually, receiver } from "./helpers/relay-fixtures";

/**
 * Budgets, time windows, gas price ceilings, the dry run and fallback=self_pay, through the HTTP API on anvil with our
 * contracts: every refusal a 402 sponsorship_declined saying which rule, what remains and when it resets.
 */
let project: ProjectWithKeys;
let key: string;
const entryPoints: Record<number, string> = {};
/** The USD price both chains use here (pinned: the chains' own price feed is shared with other test files). */
const PRICE = 2000;

const ENTRY_POINT_ABI = entryPointAbi.filter((item) => item.type === "function" && item.name === "depositTo");

beforeAll(async () => {
  vi.stubEnv("RATE_LIMIT_PER_SECOND", "0");
  vi.stubEnv("CHAIN_31337_USD_PRICE", String(PRICE));
  vi.stubEnv("CHAIN_31338_USD_PRICE", String(PRICE));
  project = await newProject("sponsorship rules");
  key = project.keys.test.secret;
  for (const chainId of [31337, 31338]) {
    const res = await call("POST", "/v1/contracts", { key, json: { name: "EntryPoint", chainId, address: serviceDeployment().entryPoint, abi: ENTRY_POINT_ABI } });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    entryPoints[chainId] = res.body.id;
  }
});
afterAll(() => {
  vi.unstubAllEnvs();
});

/** A policy sponsoring depositTo on the chain, with `rules` besides; answers the policy and its extra rules' ids. */
async function policy(chainId: number, rules: Record<string, unknown>[] = []) {
  const { body } = await call("POST", "/v1/policies", { key, json: { name: "rules", chainId, strategy: { sponsorSchema: "pay_for_user" } } });
  const allow = await call("POST", "/v1/policy_rules", { key, json: { policy: body.id, type: "contract_functions", contract: entryPoints[chainId], functionName: "depositTo" } });
  expect(allow.status, JSON.stringify(allow.body)).toBe(200);
  const ids: string[] = [];
  for (const rule of rules) {
    const res = await call("POST", "/v1/policy_rules", { key, json: { policy: body.id, ...rule } });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    ids.push(res.body.id);
  }
  return { id: body.id as string, rules: ids };
}

const deposit = (chainId: number, who: string) => ({ contract: entryPoints[chainId], functionName: "depositTo", functionArgs: [who] });

async function newAccount(chainId: number, player?: string) {
  const res = await call("POST", "/v1/accounts", { key, json: { chainId, ...(player && { player }) } });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body as { id: string; address: Address; player: { id: string } };
}

const intent = (chainId: number, policyId: string, account: string, extra: Record<string, unknown> = {}) =>
  call("POST", "/v1/transaction_intents", { key, json: { chainId, account, policy: policyId, interactions: [deposit(chainId, account)], ...extra } });

const sponsored = async (res: Awaited<ReturnType<typeof intent>>) => {
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return waitForLanding(key, res.body.id, 60_000);
};

const dryRun = async (policyId: string, body: Record<string, unknown>) => {
  const res = await call("POST", `/v1/policies/${policyId}/evaluate`, { key, json: body });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body as {
    decision: "sponsor" | "decline";
    maxCost: string;
    maxCostUsd: string | null;
    checks: { rule: string | null; type: string; passed: boolean | null; code: string; reason: string; remaining: string | null; resetsAt: number | null }[];
  };
};

const checkOf = (result: Awaited<ReturnType<typeof dryRun>>, rule: string) => result.checks.find((c) => c.rule === rule)!;

/** The chain's clock as budgets and windows read it: its latest block, or the wall clock when later (Unix seconds). */
async function chainNow(chainId: number) {
  const block = await clientOf(chainId).getBlock({ blockTag: "latest" });
  return Math.max(Number(block.timestamp), Math.floor(Date.now() / 1000));
}

async function moveChainTime(chainId: number, seconds: number) {
  await clientOf(chainId).request({ method: "evm_increaseTime" as never, params: [toHex(seconds)] as never });
  await clientOf(chainId).request({ method: "evm_mine" as never, params: [] as never });
}

const nextUtcMidnight = (seconds: number) => (Math.floor(seconds / 86_400) + 1) * 86_400;

/** The settled cost in micro-dollars of a landed intent (its gasFee at PRICE), as budgets count it. */
const usdOfLanded = (landed: { response: { gasFee: string } }) => weiToUsdMicros(BigInt(landed.response.gasFee), PRICE);

describe("budgets", () => {
  it("a per-player USD budget is shared by the player's accounts on two chains, and not by other players", async () => {
    const { body: player } = await call("POST", "/v1/players", { key, json: {} });
    const a1 = await newAccount(31337, player.id);
    const a2 = await newAccount(31338, player.id);
    const budget = { type: "budget", amount: "1000", currency: "usd", scope: "player", period: "day" };
    const p1 = await policy(31337, [budget]);
    const p2 = await policy(31338, [budget]);

    const first = await sponsored(await intent(31337, p1.id, a1.id));
    const spent = usdOfLanded(first);
    // On the other chain, under another policy: the player's budget already counts what the first op cost (once settled).
    const seen = await eventually("the first op's settlement counted on the other chain", async () => {
      const result = await dryRun(p2.id, { account: a2.id, interactions: [deposit(31338, a2.id)] });
      const check = checkOf(result, p2.rules[0]!);
      return check.remaining === formatUsd(usdMicros("1000") - spent) && { result, check };
    });
    expect(seen.check).toMatchObject({ type: "budget", passed: true, code: "budget_exhausted", resetsAt: nextUtcMidnight(await chainNow(31338)) });
    const cost2 = usdMicros(seen.result.maxCostUsd!);
    expect(cost2).toBeGreaterThan(0n);

    // Lowered to what was spent plus half this op: declined, naming the rule, what is left and the reset.
    const amount = formatUsd(spent + cost2 / 2n);
    expect((await call("POST", `/v1/policy_rules/${p2.rules[0]}`, { key, json: { amount } })).status).toBe(200);
    const declined = expectError(await intent(31338, p2.id, a2.id), 402, "sponsorship_declined");
    expect(declined).toMatchObject({
      code: "budget_exhausted",
      details: { policy: p2.id, rule: p2.rules[0], remaining: formatUsd(cost2 / 2n) },
    });
    expect(declined.details!.resetsAt).toBe(nextUtcMidnight(await chainNow(31338)));
    // Another player's budget is its own.
    const other = await newAccount(31338);
    const theirs = checkOf(await dryRun(p2.id, { account: other.id, interactions: [deposit(31338, other.id)] }), p2.rules[0]!);
    expect(theirs.remaining).toBe(formatUsd(usdMicros(amount)));
    // A native player budget counts the operation's chain only.
    const native = await policy(31338, [{ type: "budget", amount: "1000000000000000000", currency: "native", scope: "player", period: "total" }]);
    expect(checkOf(await dryRun(native.id, { account: a2.id, interactions: [deposit(31338, a2.id)] }), native.rules[0]!).remaining).toBe("1000000000000000000");

    // Room for this op again: sponsored.
    expect((await call("POST", `/v1/policy_rules/${p2.rules[0]}`, { key, json: { amount: formatUsd(spent + cost2 * 2n) } })).status).toBe(200);
    await sponsored(await intent(31338, p2.id, a2.id));
  }, 120_000);

  it("a daily budget resets at UTC midnight of the chain's clock", async () => {
    const account = await newAccount(31338);
    const p = await policy(31338, [{ type: "budget", amount: parseEther("1").toString(), currency: "native", scope: "account", period: "day" }]);
    const first = await sponsored(await intent(31338, p.id, account.id));
    // Exactly what the first op cost: nothing is left today.
    const cost = BigInt(first.response.gasFee);
    await eventually("the first op settled", async () => checkOf(await dryRun(p.id, { account: account.id, interactions: [deposit(31338, account.id)] }), p.rules[0]!).remaining === (parseEther("1") - cost).toString());
    expect((await call("POST", `/v1/policy_rules/${p.rules[0]}`, { key, json: { amount: cost.toString() } })).status).toBe(200);
    const refused = expectError(await intent(31338, p.id, account.id), 402);
    const midnight = nextUtcMidnight(await chainNow(31338));
    expect(refused).toMatchObject({ code: "budget_exhausted", details: { rule: p.rules[0], remaining: "0", resetsAt: midnight } });

    // The chain passes midnight: a new day, a new budget.
    await moveChainTime(31338, midnight - (await chainNow(31338)) + 5);
    expect(await chainNow(31338)).toBeGreaterThanOrEqual(midnight);
    const after = await dryRun(p.id, { account: account.id, interactions: [deposit(31338, account.id)] });
    expect(checkOf(after, p.rules[0]!)).toMatchObject({ remaining: cost.toString(), resetsAt: midnight + 86_400 });
    // The op may cost more at most than the first one cost: give the day room for it (fees move a little meanwhile).
    expect((await call("POST", `/v1/policy_rules/${p.rules[0]}`, { key, json: { amount: (BigInt(after.maxCost) * 2n).toString() } })).status).toBe(200);
    await sponsored(await intent(31338, p.id, account.id));
  }, 120_000);

  it("a budget per operation caps each op alone, and replaces the install's per-op cap", async () => {
    const account = await newAccount(31337);
    const tiny = await policy(31337, [{ type: "budget", amount: "1", currency: "native", scope: "operation" }]);
    expect(expectError(await intent(31337, tiny.id, account.id), 402)).toMatchObject({
      code: "budget_exhausted",
      message: expect.stringMatching(/per operation/),
      details: { policy: tiny.id, rule: tiny.rules[0], remaining: "1" },
    });
    // The install's cap (SPONSOR_MAX_COST_WEI) is far below the op: a policy without its own per-op limit declines it...
    vi.stubEnv("SPONSOR_MAX_COST_WEI", "1000");
    try {
      const plain = await policy(31337);
      const capped = expectError(await intent(31337, plain.id, account.id), 402);
      expect(capped).toMatchObject({ code: "max_cost_exceeded", message: expect.stringMatching(/\d+ gas at up to \d+ wei per gas\), over the 1000 wei per operation.*SPONSOR_MAX_COST_WEI/), details: { policy: plain.id, remaining: "1000" } });
      expect(capped.details).not.toHaveProperty("rule");
      // ...while a USD budget per operation of its own replaces it.
      const roomy = await policy(31337, [{ type: "budget", amount: "100", currency: "usd", scope: "operation" }]);
      await sponsored(await intent(31337, roomy.id, account.id));
    } finally {
      vi.stubEnv("SPONSOR_MAX_COST_WEI", "");
    }
  }, 120_000);

  it("concurrent intents never overrun a budget together", async () => {
    const account = await newAccount(31337);
    const p = await policy(31337, [{ type: "budget", amount: parseEther("1").toString(), currency: "native", scope: "policy", period: "total" }]);
    const first = await sponsored(await intent(31337, p.id, account.id));
    const spent = BigInt(first.response.gasFee);
    const usage = async () => (await call("GET", `/v1/policy_rules/${p.rules[0]}`, { key, query: { expand: ["usage"] } })).body.usage;
    await eventually("the first op settled", async () => (await usage()).used === spent.toString());
    const one = await dryRun(p.id, { account: account.id, interactions: [deposit(31337, account.id)] });
    // Room for two and a half more ops at their most.
    const amount = spent + (BigInt(one.maxCost) * 5n) / 2n;
    expect((await call("POST", `/v1/policy_rules/${p.rules[0]}`, { key, json: { amount: amount.toString() } })).status).toBe(200);
    const results = await Promise.all(Array.from({ length: 8 }, () => intent(31337, p.id, account.id)));
    const ok = results.filter((r) => r.status === 200);
    expect(ok.length, JSON.stringify(results.map((r) => r.body))).toBeGreaterThanOrEqual(1);
    expect(ok.length).toBeLessThanOrEqual(3);
    for (const r of results.filter((r) => r.status !== 200)) expect(expectError(r, 402)).toMatchObject({ code: "budget_exhausted", details: { rule: p.rules[0] } });
    // Held at their most (and settled since, for less): within the budget.
    expect(BigInt((await usage()).used)).toBeLessThanOrEqual(amount);
    await Promise.all(ok.map((r) => waitForLanding(key, r.body.id, 60_000)));
  }, 120_000);
});

describe("ERC-7677 operations", () => {
  it("count toward budgets: a signed op's hold is used, and a budget it exhausts declines the next with its code", async () => {
    const { body: pol } = await call("POST", "/v1/policies", { key, json: { name: "7677", chainId: 31337, strategy: { sponsorSchema: "pay_for_user" } } });
    expect((await call("POST", "/v1/policy_rules", { key, json: { policy: pol.id, type: "contract_functions", wildcard: true, functionName: "All functions" } })).status).toBe(200);
    const budget = await call("POST", "/v1/policy_rules", { key, json: { policy: pol.id, type: "budget", amount: "1000", currency: "usd", scope: "policy", period: "day" } });
    const owner = privateKeyToAccount(generatePrivateKey());
    const { body: account } = await call("POST", "/v1/accounts", { key, json: { chainId: 31337, externalOwnerAddress: owner.address } });
    const { initCode } = accountFactoryCall(owner.address, accountSalt(account.player.id));
    const ping = encodeFunctionData({ abi: smartAccountAbi, functionName: "execute", args: [privateKeyToAccount(generatePrivateKey()).address, 0n, "0x"] });
    // These ops are only signed, never sent: they ask the lowest fees the paymaster's bound allows room for (the
    // latest base fee, the least tip), as the shared test chains mine a block per transaction and their fees can
    // fall further between two calls than a real chain's do in minutes. The budget counts whatever fee they name.
    const clientOp = async (nonceKey: bigint) => {
      const { op } = await estimateUserOperation(chainOf(31337), { sender: account.address, initCode, callData: ping, sponsored: true, nonceKey });
      const maxPriorityFeePerGas = MIN_PRIORITY_FEE;
      const maxFeePerGas = (op.maxFeePerGas - op.maxPriorityFeePerGas) / 2n + maxPriorityFeePerGas;
      return serializeUserOp({ ...op, maxFeePerGas, maxPriorityFeePerGas, paymasterAndData: "0x", signature: "0x" });
    };
    const rpc = async (method: string, op: Record<string, string>) =>
      (await call("POST", `/v1/paymaster_service/${project.keys.test.publishable}`, { json: { jsonrpc: "2.0", id: 1, method, params: [op, serviceDeployment().entryPoint, "0x7a69", { policy: pol.id }] } })).body;

    const first = await clientOp(1n);
    expect((await rpc("pm_getPaymasterStubData", first)).result).toBeDefined();
    const signed = await rpc("pm_getPaymasterData", first);
    expect(signed.result?.paymasterAndData, JSON.stringify(signed)).toMatch(/^0x/);
    const usage = (await call("GET", `/v1/policy_rules/${budget.body.id}`, { key, query: { expand: ["usage"] } })).body.usage;
    expect(usdMicros(usage.used)).toBeGreaterThan(0n);
    // Used up: the next op is declined with the decline's code and details in the JSON-RPC error's data.
    expect((await call("POST", `/v1/policy_rules/${budget.body.id}`, { key, json: { amount: usage.used } })).status).toBe(200);
    const refused = await rpc("pm_getPaymasterData", await clientOp(2n));
    expect(refused.error, JSON.stringify(refused)).toMatchObject({ code: -32003, data: { code: "budget_exhausted", policy: pol.id, rule: budget.body.id, remaining: "0.000000" } });
    // Asked again for the first op's nonce, its earlier signature's hold does not count against it.
    const again = await rpc("pm_getPaymasterData", first);
    expect(again.result?.paymasterAndData, JSON.stringify(again)).toMatch(/^0x/);
  }, 120_000);
});

describe("time windows and gas price ceilings", () => {
  it("a time window sponsors only between its instants of the chain's clock", async () => {
    const account = await newAccount(31338);
    const now = await chainNow(31338);
    const startsAt = now + 3600;
    const endsAt = now + 7200;
    const p = await policy(31338, [{ type: "time_window", startsAt, endsAt }]);
    expect(expectError(await intent(31338, p.id, account.id), 402)).toMatchObject({
      code: "outside_time_window",
      details: { policy: p.id, rule: p.rules[0], resetsAt: startsAt },
    });
    await moveChainTime(31338, startsAt - (await chainNow(31338)) + 1);
    await sponsored(await intent(31338, p.id, account.id));
    await moveChainTime(31338, endsAt - (await chainNow(31338)) + 1);
    const ended = expectError(await intent(31338, p.id, account.id), 402);
    expect(ended).toMatchObject({ code: "outside_time_window", message: expect.stringMatching(/ended/), details: { rule: p.rules[0] } });
    expect(ended.details).not.toHaveProperty("resetsAt");
  }, 120_000);

  it("a gas price ceiling declines an op asking more, and an intent the service builds waits for the fee to fall", async () => {
    const chainId = 31338;
    const account = await newAccount(chainId);
    const low = await policy(chainId, [{ type: "gas_price", maxFeePerGas: "1" }]);
    expect(expectError(await intent(chainId, low.id, account.id), 402)).toMatchObject({
      code: "gas_price_too_high",
      message: expect.stringMatching(/over the 1 wei ceiling/),
      details: { policy: low.id, rule: low.rules[0] },
    });

    // Fees up, a ceiling between them and today's: the intent waits, and goes once the fee falls back.
    const client = clientOf(chainId);
    const before = await chainFees(chainOf(chainId));
    const base = before.baseFee ?? 0n;
    const highBase = base * 4n + parseGwei("2");
    const setBase = async (fee: bigint) => {
      await client.request({ method: "anvil_setNextBlockBaseFeePerGas" as never, params: [toHex(fee)] as never });
      await client.request({ method: "evm_mine" as never, params: [] as never });
    };
    await setBase(highBase);
    const high = await chainFees(chainOf(chainId));
    const ceiling = (before.maxFeePerGas + high.maxFeePerGas) / 2n;
    expect(high.maxFeePerGas).toBeGreaterThan(ceiling);
    const waiting = await policy(chainId, [{ type: "gas_price", maxFeePerGas: ceiling.toString(), waitSeconds: 30 }]);
    let answered = false;
    const pending = intent(chainId, waiting.id, account.id).finally(() => (answered = true));
    await new Promise((r) => setTimeout(r, 2000));
    expect(answered, "answered while the fee was still above the ceiling").toBe(false);
    await setBase(base);
    const res = await pending;
    const landed = await sponsored(res);
    expect(BigInt(landed.userOperation.maxFeePerGas)).toBeLessThanOrEqual(ceiling);
  }, 120_000);
});

describe("POST /v1/policies/{id}/evaluate (dry run)", () => {
  it("answers every check with its reason, holding nothing and asking the webhook only when told to", async () => {
    const approvals = await receiver(() => ({ status: 200, body: JSON.stringify({ sponsor: false, reason: "not this player" }) }));
    try {
      const account = await newAccount(31337);
      const now = await chainNow(31337);
      const p = await policy(31337, [
        { type: "rate_limit", functionName: "count_per_interval", countLimit: 5, timeIntervalType: "hour", timeIntervalValue: 1 },
        { type: "budget", amount: "1", currency: "native", scope: "operation" },
        { type: "budget", amount: "50", currency: "usd", scope: "player", period: "month" },
        { type: "time_window", startsAt: now + 86_400 },
        { type: "gas_price", maxFeePerGas: "1" },
        { type: "approval_webhook", url: approvals.url },
      ]);
      const [count, perOp, monthly, window, gas, webhook] = p.rules;
      const balance = async () => (await call("GET", "/v1/sponsorship/balances", { key })).body.data.find((b: { chainId: number }) => b.chainId === 31337);
      const heldBefore = (await balance()).held;

      const result = await dryRun(p.id, { account: account.id, interactions: [deposit(31337, account.id), { to: account.address, value: "0" }] });
      expect(result.decision).toBe("decline");
      expect(BigInt(result.maxCost)).toBeGreaterThan(0n);
      expect(result.maxCostUsd).toBe(formatUsd(weiToUsdMicros(BigInt(result.maxCost), PRICE)));
      const byType = (type: string) => result.checks.find((c) => c.type === type && c.rule === null)!;
      expect(byType("policy")).toMatchObject({ passed: true });
      expect(byType("calls")).toMatchObject({ passed: false, code: "no_matching_rule", reason: expect.stringMatching(/account itself/) });
      expect(checkOf(result, count!)).toMatchObject({ type: "rate_limit", passed: true, remaining: "5", resetsAt: null });
      expect(checkOf(result, perOp!)).toMatchObject({ type: "budget", passed: false, code: "budget_exhausted", remaining: "1" });
      expect(checkOf(result, monthly!)).toMatchObject({ type: "budget", passed: true, remaining: "50.000000", resetsAt: expect.any(Number) });
      expect(checkOf(result, window!)).toMatchObject({ type: "time_window", passed: false, code: "outside_time_window", resetsAt: now + 86_400 });
      expect(checkOf(result, gas!)).toMatchObject({ type: "gas_price", passed: false, code: "gas_price_too_high" });
      expect(checkOf(result, webhook!)).toMatchObject({ type: "approval_webhook", passed: null });
      expect(approvals.received).toHaveLength(0);
      expect((await balance()).held).toBe(heldBefore);

      // Asked to, it calls the webhook (form encoding too).
      const asked = await call("POST", `/v1/policies/${p.id}/evaluate`, { key, form: { account: account.id, interactions: [deposit(31337, account.id)], callWebhook: "true" } });
      expect(asked.status, JSON.stringify(asked.body)).toBe(200);
      expect(checkOf(asked.body, webhook!)).toMatchObject({ passed: false, code: "webhook_declined", reason: expect.stringMatching(/not this player/) });
      expect(approvals.received).toHaveLength(1);

      // A policy that sponsors it says so; a deleted policy or another chain is a 400.
      const open = await policy(31337, [{ type: "budget", amount: "50", currency: "usd", scope: "policy", period: "week" }]);
      const fine = await dryRun(open.id, { player: account.player.id, interactions: [deposit(31337, account.id)] });
      expect(fine.decision).toBe("sponsor");
      expect(fine.checks.every((c) => c.passed !== false)).toBe(true);
      expect(fine.checks.map((c) => c.type)).toEqual(expect.arrayContaining(["policy", "calls", "max_cost", "budget", "balance"]));
      expectError(await call("POST", `/v1/policies/${open.id}/evaluate`, { key, json: { account: account.id, chainId: 31338, interactions: [deposit(31337, account.id)] } }), 400);
      expectError(await call("POST", `/v1/policies/${open.id}/evaluate`, { key, json: { interactions: [deposit(31337, account.id)] } }), 400);
      await call("DELETE", `/v1/policies/${open.id}`, { key });
      expectError(await call("POST", `/v1/policies/${open.id}/evaluate`, { key, json: { account: account.id, interactions: [deposit(31337, account.id)] } }), 400);
      expectError(await call("POST", `/v1/policies/pol_missing/evaluate`, { key, json: { account: account.id, interactions: [deposit(31337, account.id)] } }), 404);
    } finally {
      await approvals.close();
    }
  }, 120_000);
});

describe("expand=usage", () => {
  it("shows a budget's use, what remains and when it resets", async () => {
    const account = await newAccount(31337);
    const p = await policy(31337, [
      { type: "budget", amount: parseEther("1").toString(), currency: "native", scope: "policy", period: "month" },
      { type: "budget", amount: "20", currency: "usd", scope: "player", period: "week" },
    ]);
    const landed = await sponsored(await intent(31337, p.id, account.id));
    const cost = BigInt(landed.response.gasFee);
    const rule = await eventually("the op settled", async () => {
      const res = await call("GET", `/v1/policy_rules/${p.rules[0]}`, { key, query: { expand: ["usage"] } });
      return res.body.usage?.used === cost.toString() && res.body;
    });
    const now = new Date((await chainNow(31337)) * 1000);
    const nextMonth = Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1) / 1000;
    expect(rule.usage).toMatchObject({ used: cost.toString(), remaining: (parseEther("1") - cost).toString(), resetsAt: nextMonth });
    // Per player: the player named, else no single use to show.
    const perPlayer = await call("GET", `/v1/policy_rules/${p.rules[1]}`, { key, query: { expand: ["usage"], player: account.player.id } });
    expect(perPlayer.body.usage).toMatchObject({ used: formatUsd(weiToUsdMicros(cost, PRICE)), remaining: formatUsd(usdMicros("20") - weiToUsdMicros(cost, PRICE)) });
    const anyone = await call("GET", `/v1/policy_rules/${p.rules[1]}`, { key, query: { expand: ["usage"] } });
    expect(anyone.body.usage).toMatchObject({ used: null, remaining: null, resetsAt: expect.any(Number) });
    // Listed too; without expand, no usage.
    const listed = await call("GET", "/v1/policy_rules", { key, query: { policy: p.id, expand: ["usage"] } });
    expect(listed.body.data.find((r: { id: string }) => r.id === p.rules[0]).usage.used).toBe(cost.toString());
    expect((await call("GET", `/v1/policy_rules/${p.rules[0]}`, { key })).body.usage).toBeUndefined();
  }, 120_000);
});

describe("fallback=self_pay", () => {
  it("pays from the account's own balance when declined, recording the decline; without the balance the decline stands", async () => {
    const p = await policy(31337, [{ type: "budget", amount: "1", currency: "native", scope: "operation" }]);
    const poor = await newAccount(31337);
    expect(expectError(await intent(31337, p.id, poor.id, { fallback: "self_pay" }), 402)).toMatchObject({ code: "budget_exhausted" });

    const rich = await newAccount(31337);
    await clientOf(31337).request({ method: "anvil_setBalance" as never, params: [rich.address, toHex(parseEther("1"))] as never });
    const res = await intent(31337, p.id, rich.id, { fallback: "self_pay" });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.sponsorshipDecline).toMatchObject({ code: "budget_exhausted", policy: p.id, rule: p.rules[0] });
    expect(res.body.userOperation.paymasterAndData).toBe("0x");
    const landed = await waitForLanding(key, res.body.id, 60_000);
    expect(landed.response.status).toBe(1);
    expect(landed.sponsorshipDecline).toMatchObject({ code: "budget_exhausted" });
    expect(await clientOf(31337).getBalance({ address: rich.address })).toBeLessThan(parseEther("1"));
    // Form encoding, and a value that is not a fallback.
    expectError(await call("POST", "/v1/transaction_intents", { key, form: { chainId: "31337", account: rich.id, policy: p.id, fallback: "never", interactions: [deposit(31337, rich.id)] } }), 400);
  }, 120_000);
});
