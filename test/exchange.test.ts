import Openfort from "@openfort/openfort-node";
import { erc20Abi, getAddress, maxUint256, parseEther, toHex, type Address } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { testTokenAbi, testTokenBytecode } from "@/contracts/artifacts";
import { routerAbi } from "@/lib/exchange/abi";
import { localExchange } from "@/lib/exchange/deployment";
import type { ProjectWithKeys } from "@/lib/projects/service";
import { call, expectError, newProject, waitForLanding } from "./helpers/api";
import { clientOf, fundedWallet, mined } from "./helpers/chain";
import { routeServer } from "./helpers/sdk-server";

/**
 * Swaps on the real local Uniswap v2 of chain 31337 (deployed by the global setup's prepareChain). The demo pools are
 * shared with any other test that swaps, and deep (1000 ETH a side), so the tests tolerate price moves: an amount is
 * checked against the quote's slippage bound, which the router itself enforces, and to be near the quote.
 */
const CHAIN = 31337;
const ex = localExchange();
const [GOLD, GEM] = ex.tokens.map((t) => t.address) as [Address, Address];
const client = clientOf(CHAIN);

let project: ProjectWithKeys;
let key: string;
let sponsoring: { id: string };

const balanceOf = (token: Address, holder: string) => client.readContract({ address: token, abi: erc20Abi, functionName: "balanceOf", args: [holder as Address] });
const setBalance = (address: string, wei: bigint) => client.request({ method: "anvil_setBalance" as never, params: [address, toHex(wei)] as never });
const intentsTotal = async () => (await call("GET", "/v1/transaction_intents", { key })).body.total as number;
const newAccount = async () => (await call("POST", "/v1/accounts", { key, json: { chainId: CHAIN } })).body as { id: string; address: Address; player: { id: string } };
const near = (actual: bigint, expected: bigint, percent: number) => {
  const diff = actual > expected ? actual - expected : expected - actual;
  expect(diff * 10_000n <= expected * BigInt(percent * 100), `${actual} not within ${percent}% of ${expected}`).toBe(true);
};

beforeAll(async () => {
  project = await newProject("exchange");
  key = project.keys.test.secret;
  const register = async (name: string, address: Address, abi: unknown) => (await call("POST", "/v1/contracts", { key, json: { name, chainId: CHAIN, address, abi } })).body as { id: string };
  const router = await register("Uniswap v2 router", ex.router, routerAbi);
  const gold = await register("Demo Gold", GOLD, erc20Abi);
  await register("Demo Gem", GEM, erc20Abi);
  sponsoring = (await call("POST", "/v1/policies", { key, json: { name: "swaps", chainId: CHAIN, strategy: { sponsorSchema: "pay_for_user" } } })).body;
  for (const functionName of ["swapExactETHForTokens", "swapETHForExactTokens"]) {
    await call("POST", "/v1/policy_rules", { key, json: { policy: sponsoring.id, type: "contract_functions", contract: router.id, functionName } });
  }
  await call("POST", "/v1/policy_rules", { key, json: { policy: sponsoring.id, type: "contract_functions", contract: gold.id, functionName: "approve" } });
  // A token swap's deployment is a call to the account itself.
  await call("POST", "/v1/policy_rules", { key, json: { policy: sponsoring.id, type: "account_functions" } });
});

describe("swaps on the local exchange", () => {
  it("quotes and executes a sponsored swap of native for a demo token by a custodial player's account", async () => {
    const account = await newAccount();
    await setBalance(account.address, parseEther("1"));
    const body = { chainId: CHAIN, fromAddress: account.player.id, tokenInAddress: "native", tokenOutAddress: GOLD, amount: parseEther("0.01").toString(), tradeType: "EXACT_INPUT", slippagePercent: 1, policy: sponsoring.id };
    const quote = await call("POST", "/v1/exchange/quote", { key, json: body });
    expect(quote.status, JSON.stringify(quote.body)).toBe(200);
    const gold = { address: GOLD, chainId: CHAIN, decimals: 18, name: "Demo Gold", symbol: "GOLD" };
    expect(quote.body).toEqual({
      amount: { token: gold, value: expect.stringMatching(/^\d+$/) },
      amountWithMaxSlippage: { token: gold, value: expect.stringMatching(/^\d+$/) },
      slippage: 1,
      fees: [],
      estimatedTXGasFee: expect.stringMatching(/^[1-9]\d*$/),
      estimatedTXGasFeeUSD: null,
    });
    // 1 ETH = 1000 GOLD, less the pool's 0.3%.
    near(BigInt(quote.body.amount.value), parseEther("9.97"), 0.5);
    expect(BigInt(quote.body.amountWithMaxSlippage.value)).toBe((BigInt(quote.body.amount.value) * 99n) / 100n);

    // A policy whose rules do not allow the router refuses, and nothing is sent.
    const { body: bare } = await call("POST", "/v1/policies", { key, json: { name: "no swaps", chainId: CHAIN, strategy: { sponsorSchema: "pay_for_user" } } });
    const before = await intentsTotal();
    expect(expectError(await call("POST", "/v1/exchange", { key, json: { ...body, policy: bare.id } }), 402)).toMatchObject({ code: "no_matching_rule", details: { policy: bare.id } });
    expect(await intentsTotal()).toBe(before);

    const swap = await call("POST", "/v1/exchange", { key, json: body });
    expect(swap.status, JSON.stringify(swap.body)).toBe(200);
    expect(swap.body).toMatchObject({ object: "transactionIntent", chainId: CHAIN, account: { id: account.id }, policy: { id: sponsoring.id } });
    expect(swap.body.interactions).toEqual([expect.objectContaining({ to: ex.router, functionName: "swapExactETHForTokens", value: parseEther("0.01").toString() })]);
    expect((await waitForLanding(key, swap.body.id)).response.status).toBe(1);
    const got = await balanceOf(GOLD, account.address);
    expect(got >= BigInt(quote.body.amountWithMaxSlippage.value)).toBe(true);
    near(got, BigInt(quote.body.amount.value), 0.5);
    // Sponsored: the account paid the swap's value and no gas.
    expect(await client.getBalance({ address: account.address })).toBe(parseEther("0.99"));
  }, 60_000);

  it("swaps token for token (approve and swap batched) for an exact output, paid by the account, with the service fee taken to its recipient; then a token for native", async () => {
    const account = await newAccount();
    await setBalance(account.address, parseEther("1"));
    const minter = await fundedWallet(CHAIN);
    await mined(CHAIN, await minter.writeContract({ address: GOLD, abi: testTokenAbi, functionName: "mint", args: [account.address, parseEther("100")] }));
    const recipient = privateKeyToAccount(generatePrivateKey()).address;
    const fee = await call("POST", "/v1/settings/exchange", { key, form: { feeBasisPoints: "100", feeRecipient: recipient } });
    expect(fee.status, JSON.stringify(fee.body)).toBe(200);
    expect(fee.body).toMatchObject({ object: "exchangeSettings", livemode: false, feeBasisPoints: 100, feeRecipient: recipient });
    expect((await call("GET", "/v1/settings/exchange", { key })).body).toMatchObject({ feeBasisPoints: 100, feeRecipient: recipient });
    try {
      const body = { chainId: CHAIN, fromAddress: account.address, tokenInAddress: GOLD, tokenOutAddress: GEM, amount: parseEther("1").toString(), tradeType: "EXACT_OUTPUT", slippagePercent: 2 };
      const { body: quote } = await call("POST", "/v1/exchange/quote", { key, json: body });
      expect(quote.amount.token.symbol).toBe("GOLD");
      // 1 GEM = 20 GOLD (+0.3% pool fee, more through two pools), plus 1% of it as the service fee.
      near(BigInt(quote.amount.value), parseEther("20.26"), 1);
      expect(quote.fees).toEqual([{ recipient, basisPoints: 100, amount: { token: expect.objectContaining({ address: GOLD }), value: expect.stringMatching(/^\d+$/) } }]);
      const feeAmount = BigInt(quote.fees[0].amount.value);

      const swap = await call("POST", "/v1/exchange", { key, json: body });
      expect(swap.status, JSON.stringify(swap.body)).toBe(200);
      expect(swap.body.policy).toBeUndefined();
      expect(swap.body.interactions.map((i: { functionName: string }) => i.functionName)).toEqual(["transfer", "approve", "swapTokensForExactTokens"]);
      expect((await waitForLanding(key, swap.body.id)).response.status).toBe(1);
      expect(await balanceOf(GEM, account.address)).toBe(parseEther("1"));
      expect(await balanceOf(GOLD, recipient)).toBe(feeAmount);
      const spent = parseEther("100") - (await balanceOf(GOLD, account.address));
      expect(spent <= BigInt(quote.amountWithMaxSlippage.value)).toBe(true);
      near(spent, BigInt(quote.amount.value), 1);
      // Paid by the account: its ETH paid the gas.
      expect(await client.getBalance({ address: account.address })).toBeLessThan(parseEther("1"));
    } finally {
      expect((await call("DELETE", "/v1/settings/exchange", { key })).body).toMatchObject({ deleted: true, feeBasisPoints: 100 });
    }
    expect((await call("GET", "/v1/settings/exchange", { key })).body).toMatchObject({ feeBasisPoints: 0, feeRecipient: null });

    // GEM to native (swapExactTokensForETH), the account named by its acc_ id, in a form body.
    const form = { chainId: String(CHAIN), fromAddress: account.id, tokenInAddress: GEM, tokenOutAddress: "native", amount: parseEther("0.5").toString(), tradeType: "EXACT_INPUT", slippagePercent: "1.5", maxHops: "2" };
    const { body: quote } = await call("POST", "/v1/exchange/quote", { key, form });
    expect(quote).toMatchObject({ amount: { token: { address: "native", symbol: "ETH", decimals: 18 } }, slippage: 1.5 });
    near(BigInt(quote.amount.value), parseEther("0.00997"), 1);
    const swap = await call("POST", "/v1/exchange", { key, form });
    expect(swap.status, JSON.stringify(swap.body)).toBe(200);
    expect(swap.body.interactions.map((i: { functionName: string }) => i.functionName)).toEqual(["approve", "swapExactTokensForETH"]);
    expect((await waitForLanding(key, swap.body.id)).response.status).toBe(1);
    expect(await balanceOf(GEM, account.address)).toBe(parseEther("0.5"));
  }, 90_000);

  it("finds a two-hop route through a demo token, and refuses bad swaps with a 400 naming the parameter, sending nothing", async () => {
    // A fresh token pooled only with GEM: reaching native takes two hops (X → GEM → WETH).
    const wallet = await fundedWallet(CHAIN);
    const deployed = await mined(CHAIN, await wallet.deployContract({ abi: testTokenAbi, bytecode: testTokenBytecode, args: ["Lonely", "LONE"] }));
    const lone = getAddress(deployed.contractAddress!);
    for (const token of [lone, GEM]) {
      await mined(CHAIN, await wallet.writeContract({ address: token, abi: testTokenAbi, functionName: "mint", args: [wallet.account.address, parseEther("1000")] }));
      await mined(CHAIN, await wallet.writeContract({ address: token, abi: testTokenAbi, functionName: "approve", args: [ex.router, maxUint256] }));
    }
    await mined(CHAIN, await wallet.writeContract({ address: ex.router, abi: routerAbi, functionName: "addLiquidity", args: [lone, GEM, parseEther("1000"), parseEther("100"), 0n, 0n, wallet.account.address, maxUint256] }));

    const account = await newAccount();
    await setBalance(account.address, parseEther("1"));
    const base = { chainId: CHAIN, fromAddress: account.address, tokenInAddress: "native", tokenOutAddress: lone, amount: parseEther("0.01").toString(), tradeType: "EXACT_INPUT", policy: sponsoring.id };
    const twoHops = await call("POST", "/v1/exchange/quote", { key, json: base });
    expect(twoHops.status, JSON.stringify(twoHops.body)).toBe(200);
    // 0.01 ETH = 0.5 GEM = 5 LONE, less two pool fees.
    near(BigInt(twoHops.body.amount.value), parseEther("4.97"), 1);
    expect(twoHops.body.amount.token).toMatchObject({ address: lone, symbol: "LONE", name: "Lonely" });

    const before = await intentsTotal();
    const refused = async (body: Record<string, unknown>, param: string, path = "/v1/exchange") => {
      const error = expectError(await call("POST", path, { key, json: { ...base, ...body } }), 400);
      expect(error.details?.[param], `${JSON.stringify(body)}: ${JSON.stringify(error)}`).toBeDefined();
      return error;
    };
    expect((await refused({ maxHops: 1 }, "tokenOutAddress")).message).toMatch(/No route .* within 1 hop/);
    await refused({ tokenOutAddress: privateKeyToAccount(generatePrivateKey()).address }, "tokenOutAddress");
    await refused({ tokenInAddress: ex.router, tokenOutAddress: GOLD }, "tokenInAddress", "/v1/exchange/quote");
    await refused({ tokenOutAddress: ex.weth }, "tokenOutAddress");
    await refused({ tokenInAddress: GOLD, tokenOutAddress: GOLD }, "tokenOutAddress");
    await refused({ slippagePercent: 51 }, "slippagePercent");
    await refused({ slippagePercent: -1 }, "slippagePercent");
    await refused({ maxHops: 5 }, "maxHops");
    await refused({ maxHops: 0 }, "maxHops");
    await refused({ deadline: 1_000_000 }, "deadline");
    await refused({ amount: parseEther("2").toString() }, "amount");
    await refused({ amount: "0" }, "amount");
    await refused({ amount: "1.5" }, "amount");
    await refused({ tokenInAddress: GOLD }, "amount");
    await refused({ tradeType: "BOTH" }, "tradeType");
    await refused({ fromAddress: privateKeyToAccount(generatePrivateKey()).address }, "fromAddress");
    await refused({ fromAddress: "acc_00000000-0000-4000-8000-000000000000" }, "fromAddress");
    await refused({ fromAddress: (await call("POST", "/v1/players", { key, json: {} })).body.id }, "fromAddress");
    await refused({ policy: "pol_00000000-0000-4000-8000-000000000000" }, "policy");
    // Another project's account is not this project's.
    const other = await newProject("exchange other");
    const { body: theirs } = await call("POST", "/v1/accounts", { key: other.keys.test.secret, json: { chainId: CHAIN } });
    await refused({ fromAddress: theirs.address }, "fromAddress");
    await refused({ fromAddress: theirs.id }, "fromAddress");
    // A configured chain without a router has no exchange.
    process.env.CHAINS = JSON.stringify([{ chainId: 424242, rpcUrl: "http://127.0.0.1:9", livemode: false }]);
    try {
      expect((await refused({ chainId: 424242 }, "chainId")).message).toMatch(/no exchange/);
    } finally {
      delete process.env.CHAINS;
    }
    expect(await intentsTotal()).toBe(before);
  }, 60_000);

  it("works through the official SDK: exchange.quoteSwap and exchange.createSwap (sponsored, non-custodial accounts get nextAction)", async () => {
    const server = await routeServer();
    try {
      const openfort = new Openfort(key, server.url);
      const account = await newAccount();
      await setBalance(account.address, parseEther("1"));
      const request = { chainId: CHAIN, fromAddress: account.id, tokenInAddress: "native", tokenOutAddress: GEM, amount: parseEther("1").toString(), tradeType: "EXACT_OUTPUT" as const, policy: sponsoring.id };
      const quote = await openfort.exchange.quoteSwap(request);
      expect(quote.amount.token).toMatchObject({ address: "native", symbol: "ETH" });
      near(BigInt(quote.amount.value), parseEther("0.02006"), 1);
      const intent = await openfort.exchange.createSwap({ ...request, optimistic: true });
      expect(intent.id).toMatch(/^tin_/);
      expect((await waitForLanding(key, intent.id)).response.status).toBe(1);
      expect(await balanceOf(GEM, account.address)).toBe(parseEther("1"));
      const spent = parseEther("1") - (await client.getBalance({ address: account.address }));
      expect(spent <= BigInt(quote.amountWithMaxSlippage.value)).toBe(true);

      const owner = privateKeyToAccount(generatePrivateKey());
      const { body: external } = await call("POST", "/v1/accounts", { key, json: { chainId: CHAIN, externalOwnerAddress: owner.address } });
      await setBalance(external.address, parseEther("1"));
      const unsigned = await openfort.exchange.createSwap({ ...request, fromAddress: external.address, tradeType: "EXACT_INPUT", amount: parseEther("0.01").toString() });
      expect(unsigned.nextAction?.type).toBe("sign_with_wallet");
    } finally {
      await server.close();
    }
  }, 60_000);
});

afterAll(() => {
  delete process.env.CHAINS;
});
