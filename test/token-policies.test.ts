import { erc20Abi, parseEther, type Address, type Hex } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { beforeAll, describe, expect, it } from "vitest";
import { entryPointAbi, testTokenAbi, testTokenBytecode } from "@/contracts/artifacts";
import { serviceDeployment } from "@/lib/chain/contracts";
import { requiredPrefund } from "@/lib/chain/userop";
import { deserializeUserOp } from "@/lib/intent-records/userop-json";
import type { ProjectWithKeys } from "@/lib/projects/service";
import { call, expectError, newProject, waitForLanding } from "./helpers/api";
import { clientOf, fundedWallet, mined } from "./helpers/chain";

let project: ProjectWithKeys;
let key: string;
let entryPoint: { id: string };
let token: { id: string; address: Address };
let minter: Awaited<ReturnType<typeof fundedWallet>>;

const CHAIN = 31337;
const ENTRY_POINT_ABI = entryPointAbi.filter((item) => item.type === "function" && item.name === "depositTo");
const deposit = (who: string) => ({ contract: entryPoint.id, functionName: "depositTo", functionArgs: [who] });
const tokensOf = (address: string) => clientOf(CHAIN).readContract({ address: token.address, abi: erc20Abi, functionName: "balanceOf", args: [address as Address] });

const landed = (id: string, timeoutMs?: number) => waitForLanding(key, id, timeoutMs);

async function tokenPolicy(sponsorSchema: "fixed_rate" | "charge_custom_tokens", tokenContractAmount: string) {
  const res = await call("POST", "/v1/policies", { key, form: { name: sponsorSchema, chainId: CHAIN, strategy: { sponsorSchema, tokenContract: token.id, tokenContractAmount } } });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  await call("POST", "/v1/policy_rules", { key, json: { policy: res.body.id, type: "contract_functions", contract: entryPoint.id, functionName: "depositTo" } });
  return res.body as { id: string };
}

/** A player's custodial account holding `amount` test tokens (minted to its counterfactual address). */
async function accountWithTokens(amount: bigint) {
  const { body: account } = await call("POST", "/v1/accounts", { key, json: { chainId: CHAIN } });
  if (amount > 0n) await mined(CHAIN, await minter.writeContract({ address: token.address, abi: testTokenAbi, functionName: "mint", args: [account.address, amount] }));
  return account as { id: string; address: Address; player: { id: string } };
}

/** The collecting account: the project's oldest custodial developer account. */
async function collector() {
  const { body } = await call("GET", "/v1/settings/developer_accounts", { key, query: { order: "asc", limit: 100 } });
  return body.data.find((a: { custodial: boolean }) => a.custodial) as { id: string; address: Address; name: string };
}

beforeAll(async () => {
  project = await newProject("token policies");
  key = project.keys.test.secret;
  entryPoint = (await call("POST", "/v1/contracts", { key, json: { name: "EntryPoint", chainId: CHAIN, address: serviceDeployment().entryPoint, abi: ENTRY_POINT_ABI } })).body;
  minter = await fundedWallet(CHAIN);
  const receipt = await mined(CHAIN, await minter.deployContract({ abi: testTokenAbi, bytecode: testTokenBytecode, args: ["Gold", "GOLD"] }));
  const res = await call("POST", "/v1/contracts", { key, json: { name: "Gold", chainId: CHAIN, address: receipt.contractAddress, abi: testTokenAbi } });
  token = res.body;
});

describe("fixed_rate", () => {
  it("adds the token payment to the collecting developer account into the batch and sponsors the gas; refuses when the account cannot pay", async () => {
    const policy = await tokenPolicy("fixed_rate", parseEther("5").toString());
    const account = await accountWithTokens(parseEther("12"));
    const ids: string[] = [];
    for (let i = 0; i < 2; i++) {
      const res = await call("POST", "/v1/transaction_intents", { key, json: { chainId: CHAIN, account: account.id, policy: policy.id, interactions: [deposit(account.id)] } });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      // What the developer asked for is what the intent shows; the charge rides along.
      expect(res.body.interactions).toEqual([{ ...deposit(account.id), value: "0" }]);
      expect((await landed(res.body.id)).response.status).toBe(1);
      ids.push(res.body.id);
    }
    const collecting = await collector();
    expect(collecting.name).toBe("Token collector");
    expect((await call("GET", "/v1/settings/developer_accounts", { key })).body.total).toBe(1);
    expect(await tokensOf(account.address)).toBe(parseEther("2"));
    expect(await tokensOf(collecting.address)).toBe(parseEther("10"));
    expect(await clientOf(CHAIN).getBalance({ address: account.address })).toBe(0n);

    const before = (await call("GET", "/v1/transaction_intents", { key, query: { account: [account.id] } })).body.total;
    const refused = expectError(await call("POST", "/v1/transaction_intents", { key, json: { chainId: CHAIN, account: account.id, policy: policy.id, interactions: [deposit(account.id)] } }), 400);
    expect(refused.message).toMatch(/charges 5000000000000000000 base units .* holds 2000000000000000000/);
    expect(refused.details?.policy).toBeDefined();
    expect((await call("GET", "/v1/transaction_intents", { key, query: { account: [account.id] } })).body.total).toBe(before);

    // Withdraw: to an external wallet proven by signature, never more than collected.
    const owner = privateKeyToAccount(generatePrivateKey());
    const { body: message } = await call("GET", "/v1/settings/developer_accounts/message_to_sign", { key, query: { address: owner.address } });
    expect(message).toEqual({ message: expect.stringContaining(owner.address), address: owner.address });
    const { body: wallet } = await call("POST", "/v1/settings/developer_accounts", {
      key,
      form: { address: owner.address, signature: await owner.signMessage({ message: message.message }), name: "treasury" },
    });
    expect(wallet).toMatchObject({ object: "developerAccount", address: owner.address, custodial: false, name: "treasury" });

    const balance = await call("GET", `/v1/policies/${policy.id}/withdraw`, { key });
    expect(balance.body.data).toEqual([
      expect.objectContaining({ totalTransactionFeeInCustomTokens: parseEther("10").toString(), withdrawnInCustomTokens: "0", availableInCustomTokens: parseEther("10").toString() }),
    ]);
    const tooMuch = expectError(await call("POST", `/v1/policies/${policy.id}/withdraw`, { key, json: { account: wallet.id, amount: parseEther("11").toString() } }), 400);
    expect(tooMuch.details?.amount).toBeDefined();
    expectError(await call("POST", `/v1/policies/${policy.id}/withdraw`, { key, json: { account: collecting.id, amount: "1" } }), 400);
    expectError(await call("POST", `/v1/policies/${policy.id}/withdraw`, { key, json: { account: "dac_00000000-0000-4000-8000-000000000000", amount: "1" } }), 400);

    const withdrawal = await call("POST", `/v1/policies/${policy.id}/withdraw`, { key, form: { account: wallet.id, amount: parseEther("4").toString() } });
    expect(withdrawal.status, JSON.stringify(withdrawal.body)).toBe(200);
    expect(withdrawal.body).toMatchObject({ object: "transactionIntent", account: { id: collecting.id }, policy: { id: policy.id } });
    expect(withdrawal.body.player).toBeUndefined();
    expect((await landed(withdrawal.body.id)).response.status).toBe(1);
    expect(await tokensOf(owner.address)).toBe(parseEther("4"));
    expect(await tokensOf(collecting.address)).toBe(parseEther("6"));
    const after = (await call("GET", `/v1/policies/${policy.id}/withdraw`, { key })).body.data[0];
    expect(after).toMatchObject({ withdrawnInCustomTokens: parseEther("4").toString(), availableInCustomTokens: parseEther("6").toString() });
    // The collector's own intents show on it; the list filters by dac_.
    expect((await call("GET", `/v1/settings/developer_accounts/${collecting.id}`, { key })).body.transactionIntents).toEqual([{ id: withdrawal.body.id }]);
    expect((await call("GET", "/v1/transaction_intents", { key, query: { account: [collecting.id], expand: ["account"] } })).body.data[0].account).toMatchObject({
      id: collecting.id,
      object: "developerAccount",
    });

    // Reports: one period (today), the three landed intents, their fees in wei, USD at the configured price, and tokens.
    process.env[`CHAIN_${CHAIN}_USD_PRICE`] = "2000";
    try {
      const { body: reports } = await call("GET", `/v1/policies/${policy.id}/reports`, { key });
      expect(reports.total).toBe(1);
      const [report] = reports.data;
      const fees = await Promise.all([...ids, withdrawal.body.id].map(async (id) => BigInt((await landed(id)).response.gasFee)));
      const total = fees.reduce((a, b) => a + b, 0n);
      expect(report).toMatchObject({
        totalTransactionFee: total.toString(),
        averageTransactionFee: (total / 3n).toString(),
        totalTransactionFeeInUSD: ((Number(total) / 1e18) * 2000).toFixed(6),
        totalTransactionFeeInCustomTokens: parseEther("10").toString(),
      });
      expect(report.period.end - report.period.start).toBe(86_400);
      expect(report.transactionIntents.map((i: { id: string }) => i.id).sort()).toEqual([...ids, withdrawal.body.id].sort());
      const item = report.transactionIntents[0];
      expect(BigInt(item.gasPrice) * BigInt(item.gasUsed)).toBeLessThanOrEqual(BigInt(item.gasFee));

      const now = Math.floor(Date.now() / 1000);
      const inRange = await call("GET", `/v1/policies/${policy.id}/reports/transaction_intents`, { key, query: { from: now - 600, to: now + 60, limit: 2 } });
      expect(inRange.body).toMatchObject({ object: "list", total: 3 });
      expect(inRange.body.data).toHaveLength(2);
      expect((await call("GET", `/v1/policies/${policy.id}/reports/transaction_intents`, { key, query: { from: now + 3600 } })).body.total).toBe(0);
      expectError(await call("GET", `/v1/policies/${policy.id}/reports/transaction_intents`, { key, query: { from: now, to: now - 1 } }), 400);
    } finally {
      delete process.env[`CHAIN_${CHAIN}_USD_PRICE`];
    }
    expect((await call("GET", `/v1/policies/${policy.id}/reports`, { key })).body.data[0].totalTransactionFeeInUSD).toBeNull();
  }, 120_000);

  it("holds concurrent withdrawals to what was collected", async () => {
    const policy = await tokenPolicy("fixed_rate", "1000");
    const account = await accountWithTokens(3000n);
    for (let i = 0; i < 3; i++) {
      const res = await call("POST", "/v1/transaction_intents", { key, json: { chainId: CHAIN, account: account.id, policy: policy.id, interactions: [deposit(account.id)] } });
      await landed(res.body.id);
    }
    const { body: wallet } = await call("POST", "/v1/settings/developer_accounts", { key, json: { name: "second" } });
    const attempts = await Promise.all(Array.from({ length: 5 }, () => call("POST", `/v1/policies/${policy.id}/withdraw`, { key, json: { account: wallet.id, amount: "1000" } })));
    expect(attempts.filter((r) => r.status === 200)).toHaveLength(3);
    expect(attempts.filter((r) => r.status === 400)).toHaveLength(2);
    await Promise.all(attempts.filter((r) => r.status === 200).map((r) => landed(r.body.id)));
    expect(await tokensOf(wallet.address)).toBe(3000n);
  }, 120_000);

  it("refuses withdrawals from a pay_for_user policy", async () => {
    const { body: policy } = await call("POST", "/v1/policies", { key, json: { name: "free", chainId: CHAIN, strategy: { sponsorSchema: "pay_for_user" } } });
    const { body: wallet } = await call("POST", "/v1/settings/developer_accounts", { key, json: {} });
    expect(expectError(await call("POST", `/v1/policies/${policy.id}/withdraw`, { key, json: { account: wallet.id, amount: "1" } }), 400).message).toMatch(/collects no tokens/);

    // A "token" that is no ERC-20 (no code at its address): a clear 400 for intents and withdrawals.
    const { body: fake } = await call("POST", "/v1/contracts", { key, json: { name: "no code", chainId: CHAIN, address: "0x00000000000000000000000000000000000000bb", abi: testTokenAbi } });
    const { body: broken } = await call("POST", "/v1/policies", { key, json: { name: "broken", chainId: CHAIN, strategy: { sponsorSchema: "fixed_rate", tokenContract: fake.id, tokenContractAmount: "1" } } });
    await call("POST", "/v1/policy_rules", { key, json: { policy: broken.id, type: "contract_functions", contract: entryPoint.id, functionName: "depositTo" } });
    const account = await accountWithTokens(0n);
    expect(expectError(await call("POST", "/v1/transaction_intents", { key, json: { chainId: CHAIN, account: account.id, policy: broken.id, interactions: [deposit(account.id)] } }), 400).message).toMatch(/ERC-20/);
    expect(expectError(await call("POST", `/v1/policies/${broken.id}/withdraw`, { key, json: { account: wallet.id, amount: "1" } }), 400).message).toMatch(/ERC-20/);
  });
});

describe("charge_custom_tokens", () => {
  it("charges the operation's maximum gas cost at the token rate, rounded up, and never less than it cost", async () => {
    const rate = parseEther("2000"); // 2000 tokens per ETH
    const policy = await tokenPolicy("charge_custom_tokens", rate.toString());
    const account = await accountWithTokens(parseEther("100"));
    const collecting = await collector();
    const before = await tokensOf(collecting.address);
    const res = await call("POST", "/v1/transaction_intents", { key, json: { chainId: CHAIN, account: account.id, policy: policy.id, interactions: [deposit(account.id)] } });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    const done = await landed(res.body.id);
    expect(done.response.status).toBe(1);
    const charged = parseEther("100") - (await tokensOf(account.address));
    const op = deserializeUserOp(res.body.userOperation);
    const ceil = (n: bigint) => (n + 10n ** 18n - 1n) / 10n ** 18n;
    // The charge was priced on the estimate, whose preVerificationGas differs from the final op's by at most
    // 384 gas (the 32 amount bytes, zero or not), plus 384 gas of margin: never less than the op may cost.
    expect(charged).toBeGreaterThanOrEqual(ceil(requiredPrefund(op) * rate));
    expect(charged).toBeLessThanOrEqual(ceil((requiredPrefund(op) + 768n * op.maxFeePerGas) * rate));
    expect(charged).toBeGreaterThanOrEqual(ceil(BigInt(done.response.gasFee) * rate));
    expect((await tokensOf(collecting.address)) - before).toBe(charged);
    expect((await call("GET", `/v1/policies/${policy.id}/withdraw`, { key })).body.data[0].availableInCustomTokens).toBe(charged.toString());

    const empty = await accountWithTokens(0n);
    expect(expectError(await call("POST", "/v1/transaction_intents", { key, json: { chainId: CHAIN, account: empty.id, policy: policy.id, interactions: [deposit(empty.id)] } }), 400).message).toMatch(/holds 0/);
  }, 60_000);
});

describe("developer accounts", () => {
  it("creates custodial ones, adds external wallets only with their owner's signature, renames, deletes, and keeps them per project", async () => {
    const { body: custodial } = await call("POST", "/v1/settings/developer_accounts", { key, json: { name: "ops" } });
    expect(custodial).toMatchObject({ object: "developerAccount", custodial: true, name: "ops", deleted: false, transactionIntents: [] });
    expect(custodial.id).toMatch(/^dac_/);
    expect(custodial.address).toMatch(/^0x[0-9a-fA-F]{40}$/);
    expect(JSON.stringify(custodial)).not.toMatch(/encrypted|privateKey|salt/i);

    const owner = privateKeyToAccount(generatePrivateKey());
    const other = privateKeyToAccount(generatePrivateKey());
    const { body: message } = await call("GET", "/v1/settings/developer_accounts/message_to_sign", { key, query: { address: owner.address } });
    const wrongSigner = expectError(
      await call("POST", "/v1/settings/developer_accounts", { key, json: { address: owner.address, signature: await other.signMessage({ message: message.message }) } }),
      400,
    );
    expect(wrongSigner.message).toContain(other.address);
    expectError(await call("POST", "/v1/settings/developer_accounts", { key, json: { address: owner.address } }), 400);
    expectError(await call("POST", "/v1/settings/developer_accounts", { key, json: { signature: `0x${"11".repeat(65)}` } }), 400);
    expectError(await call("POST", "/v1/settings/developer_accounts", { key, json: { address: owner.address, signature: "0x1234" } }), 400);
    expectError(await call("GET", "/v1/settings/developer_accounts/message_to_sign", { key }), 400);
    // The message names the project: another project's signature proves nothing here.
    const elsewhere = await newProject("elsewhere");
    const { body: otherMessage } = await call("GET", "/v1/settings/developer_accounts/message_to_sign", { key: elsewhere.keys.test.secret, query: { address: owner.address } });
    expect(otherMessage.message).not.toBe(message.message);
    expectError(await call("POST", "/v1/settings/developer_accounts", { key, json: { address: owner.address, signature: await owner.signMessage({ message: otherMessage.message }) } }), 400);

    const renamed = await call("POST", `/v1/settings/developer_accounts/${custodial.id}`, { key, form: { name: "operations" } });
    expect(renamed.body.name).toBe("operations");
    expectError(await call("GET", `/v1/settings/developer_accounts/${custodial.id}`, { key: elsewhere.keys.test.secret }), 404);
    expectError(await call("GET", `/v1/settings/developer_accounts/${custodial.id}`, { key: project.keys.live.secret }), 404);

    // A custodial developer account sends intents itself; an external one cannot.
    const { body: free } = await call("POST", "/v1/policies", { key, json: { name: "free", chainId: CHAIN, strategy: { sponsorSchema: "pay_for_user" } } });
    await call("POST", "/v1/policy_rules", { key, json: { policy: free.id, type: "contract_functions", contract: entryPoint.id, functionName: "depositTo" } });
    const sent = await call("POST", "/v1/transaction_intents", { key, json: { chainId: CHAIN, account: custodial.id, policy: free.id, interactions: [deposit(custodial.address)] } });
    expect(sent.status, JSON.stringify(sent.body)).toBe(200);
    expect((await landed(sent.body.id)).response.status).toBe(1);
    expect(await clientOf(CHAIN).getCode({ address: custodial.address as Hex })).toMatch(/^0x[0-9a-f]+/);
    const { body: external } = await call("POST", "/v1/settings/developer_accounts", { key, json: { address: owner.address, signature: await owner.signMessage({ message: message.message }) } });
    expect(expectError(await call("POST", "/v1/transaction_intents", { key, json: { chainId: CHAIN, account: external.id, policy: free.id, interactions: [deposit(custodial.address)] } }), 400).message).toMatch(/external wallet/);
    const { body: player } = await call("POST", "/v1/players", { key, json: {} });
    expectError(await call("POST", "/v1/transaction_intents", { key, json: { chainId: CHAIN, account: custodial.id, player: player.id, interactions: [deposit(custodial.address)] } }), 400);

    expect((await call("DELETE", `/v1/settings/developer_accounts/${external.id}`, { key })).body).toEqual({ id: external.id, object: "developerAccount", deleted: true });
    const listed = await call("GET", "/v1/settings/developer_accounts", { key, query: { limit: 100 } });
    expect(listed.body.data.map((a: { id: string }) => a.id)).not.toContain(external.id);
    expect((await call("GET", "/v1/settings/developer_accounts", { key, query: { deleted: true } })).body.data.map((a: { id: string }) => a.id)).toEqual([external.id]);
    expect((await call("GET", `/v1/settings/developer_accounts/${external.id}`, { key })).body.deleted).toBe(true);
    expectError(await call("DELETE", `/v1/settings/developer_accounts/dac_00000000-0000-4000-8000-000000000000`, { key }), 404);
  }, 60_000);
});
