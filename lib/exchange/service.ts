import { and, eq } from "drizzle-orm";
import { encodeFunctionData, erc20Abi, getAddress, isAddressEqual, type Abi, type Address } from "viem";
import { getAccount, type AccountRow } from "@/lib/accounts/service";
import { registeredContractsAt } from "@/lib/contracts/service";
import { deploymentOf } from "@/lib/chain/accounts";
import { onChain, publicClient } from "@/lib/chain/clients";
import { requireDeployment } from "@/lib/chain/contracts";
import { chainFor, type ChainConfig } from "@/lib/chain/registry";
import { encodeAccountCalls, estimateUserOperation, type AccountCall } from "@/lib/chain/userop";
import type { Queryable } from "@/lib/db/client";
import { accounts } from "@/lib/db/schema";
import { inScope } from "@/lib/db/scope";
import { badRequest, referenced } from "@/lib/errors";
import { getPlayer } from "@/lib/players/service";
import type { RuledCall } from "@/lib/policies/evaluate";
import { inUsd } from "@/lib/policies/reports";
import type { ProjectContext } from "@/lib/tenant";
import { playerSender, type IntentSender } from "@/lib/intents/sender";
import { loadPolicy, recordIntent, type IntentRow } from "@/lib/intents/service";
import { routerAbi } from "./abi";
import { amountReads, bestRoute, candidatePaths, exchangeFor, metadataReads, readAll, tokenMeta, type ChainExchange, type Route, type TokenMeta } from "./route";
import type { QuoteResponse, SwapInput } from "./schema";
import { exchangeFee } from "./settings";

/** The default deadline: 15 minutes after the chain's latest block. */
const DEFAULT_DEADLINE_SECONDS = 15 * 60;
const DEFAULT_SLIPPAGE_PERCENT = 0.1;
const DEFAULT_MAX_HOPS = 2;
/** Slippage is applied in millionths, so percentages like 0.1 or 0.05 are exact. */
const PPM = 1_000_000n;

interface SwapToken extends TokenMeta {
  native: boolean;
}

/** A swap worked out against the chain: the route, the amounts, the fee and the account's calls. */
export interface SwapPlan {
  chain: ChainConfig;
  account: AccountRow;
  sender: IntentSender;
  tokenIn: SwapToken;
  tokenOut: SwapToken;
  route: Route;
  /** What the quote shows as `amount` and `amountWithMaxSlippage` (see quoteResponse). */
  expected: bigint;
  worst: bigint;
  fee: { basisPoints: number; recipient: Address; amount: bigint } | null;
  slippagePercent: number;
  calls: (AccountCall & { ruled: RuledCall | null; interaction: Record<string, unknown> })[];
}

/** The account swapping: an address of one of the project's accounts on the chain, an acc_ id, or a player's account there. */
async function accountFrom(db: Queryable, ctx: ProjectContext, chainId: number, from: string): Promise<AccountRow> {
  const wrongChain = (account: AccountRow) =>
    badRequest(`Account ${account.id} is on chain ${account.chainId}, not ${chainId}.`, { fromAddress: { value: from, message: `an account on chain ${account.chainId}` } });
  if (from.startsWith("acc_")) {
    const account = await referenced(getAccount(db, ctx, from), "fromAddress", from);
    if (account.chainId !== chainId) throw wrongChain(account);
    return account;
  }
  if (from.startsWith("pla_")) {
    const player = await referenced(getPlayer(db, ctx, from), "fromAddress", from);
    const [account] = await db.select().from(accounts).where(and(eq(accounts.playerId, player.id), eq(accounts.chainId, chainId)));
    if (!account) {
      throw badRequest(`Player ${player.id} has no account on chain ${chainId}; create one with POST /v1/accounts first.`, {
        fromAddress: { value: from, message: `no account on chain ${chainId}` },
      });
    }
    return account;
  }
  const [account] = await db
    .select()
    .from(accounts)
    .where(inScope(accounts, ctx, eq(accounts.chainId, chainId), eq(accounts.address, getAddress(from))));
  if (!account) {
    throw badRequest(`${from} is not an account of this project on chain ${chainId}: fromAddress takes an account's address, or a pla_/acc_ id.`, {
      fromAddress: { value: from, message: "not an account of the project on this chain" },
    });
  }
  return account;
}

const nativeToken = (chain: ChainConfig, weth: Address): SwapToken => ({ ...chain.nativeCurrency, address: weth, native: true });

/**
 * Works the swap out on chain without sending anything: the account, the tokens (an address must answer like
 * an ERC-20), the best route over the router's pools within maxHops (every candidate path priced by the router in
 * one multicall, with the tokens' metadata and the account's token balance), the fee, the slippage bounds, the
 * balance, and the calls: [fee transfer], [approve], swap. The fee is taken from the input, before the swap,
 * so its amount is exact when the operation is built (the output of an exact-input swap is not known until it runs).
 */
export async function planSwap(db: Queryable, ctx: ProjectContext, input: SwapInput): Promise<SwapPlan> {
  const chain = chainFor(ctx, input.chainId);
  const exchange = await exchangeFor(chain);
  if (input.tokenInAddress === input.tokenOutAddress || [input.tokenInAddress, input.tokenOutAddress].every((t) => t === "native" || isAddressEqual(t, exchange.weth))) {
    throw badRequest("tokenInAddress and tokenOutAddress are the same token: a swap needs two different tokens (native and WETH count as one).", {
      tokenOutAddress: { value: input.tokenOutAddress, message: "the same as tokenInAddress" },
    });
  }
  const account = await accountFrom(db, ctx, chain.chainId, input.fromAddress);
  const feeSetting = await exchangeFee(db, ctx);
  const exactInput = input.tradeType === "EXACT_INPUT";
  const feeOf = (amount: bigint) => (feeSetting ? (amount * BigInt(feeSetting.basisPoints)) / 10_000n : 0n);
  // Exact input: the fee comes off the amount first, the rest is swapped.
  const swapAmount = exactInput ? input.amount - feeOf(input.amount) : input.amount;
  if (swapAmount === 0n) throw badRequest("amount is too small to swap once the fee is taken.", { amount: { value: input.amount.toString(), message: "too small" } });

  const inAddress = input.tokenInAddress === "native" ? exchange.weth : input.tokenInAddress;
  const outAddress = input.tokenOutAddress === "native" ? exchange.weth : input.tokenOutAddress;
  const paths = candidatePaths(inAddress, outAddress, exchange.bases, input.maxHops ?? DEFAULT_MAX_HOPS);
  const reads = [
    ...metadataReads(inAddress),
    ...metadataReads(outAddress),
    { address: inAddress, abi: erc20Abi as Abi, functionName: "balanceOf", args: [account.address] },
    ...amountReads(exchange.router, paths, exactInput, swapAmount),
  ];
  const client = publicClient(chain);
  const [results, block, nativeBalance] = await Promise.all([
    readAll(chain, reads),
    onChain(chain, () => client.getBlock({ blockTag: "latest" })),
    input.tokenInAddress === "native" ? onChain(chain, () => client.getBalance({ address: account.address as Address })) : null,
  ]);
  const tokenOf = (param: "tokenInAddress" | "tokenOutAddress", address: Address, metadata: unknown[]): SwapToken => {
    if (input[param] === "native") return nativeToken(chain, exchange.weth);
    const meta = tokenMeta(address, metadata);
    if (!meta) {
      throw badRequest(`${address} is not an ERC-20 token on chain ${chain.chainId} (it does not answer decimals()).`, { [param]: { value: address, message: "not an ERC-20 token" } });
    }
    return { ...meta, native: false };
  };
  const tokenIn = tokenOf("tokenInAddress", inAddress, results.slice(0, 3));
  const tokenOut = tokenOf("tokenOutAddress", outAddress, results.slice(3, 6));

  const now = block.timestamp;
  const deadline = input.deadline !== undefined ? BigInt(input.deadline) : now + BigInt(DEFAULT_DEADLINE_SECONDS);
  if (deadline <= now) {
    throw badRequest(`deadline ${input.deadline} is not after the chain's latest block (${now}).`, { deadline: { value: input.deadline, message: "in the past" } });
  }

  const route = bestRoute(paths, results.slice(7), exactInput);
  if (!route) {
    const hops = input.maxHops ?? DEFAULT_MAX_HOPS;
    throw badRequest(
      `No route from ${tokenIn.symbol || inAddress} to ${tokenOut.symbol || outAddress} on chain ${chain.chainId} within ${hops} hop(s) over the router's pools` +
        (exactInput ? "." : `, or the pools cannot supply ${input.amount} of it.`) +
        (hops < 4 ? " A larger maxHops may find one." : ""),
      { tokenOutAddress: { value: input.tokenOutAddress, message: `no route within maxHops ${hops}` } },
    );
  }

  const slippagePercent = input.slippagePercent ?? DEFAULT_SLIPPAGE_PERCENT;
  const ppm = BigInt(Math.round(slippagePercent * 10_000));
  const minOut = (route.amountOut * (PPM - ppm)) / PPM;
  const maxIn = (route.amountIn * (PPM + ppm) + PPM - 1n) / PPM;
  const feeAmount = exactInput ? input.amount - swapAmount : feeOf(route.amountIn);
  const spend = exactInput ? input.amount : maxIn + feeAmount;
  const balance = tokenIn.native ? nativeBalance! : ((results[6] as bigint | null) ?? 0n);
  if (balance < spend) {
    throw badRequest(`Account ${account.id} holds ${balance} of ${tokenIn.symbol || inAddress} (base units); this swap may spend ${spend}.`, {
      amount: { value: input.amount.toString(), message: `more than the ${balance} held` },
    });
  }

  const sender = await playerSender(db, account);
  const calls = await swapCalls(db, ctx, chain, exchange, {
    account: account.address as Address,
    tokenIn,
    tokenOut,
    route,
    exactInput,
    minOut,
    maxIn,
    deadline,
    fee: feeSetting && feeAmount > 0n ? { recipient: feeSetting.recipient, amount: feeAmount } : null,
  });
  return {
    chain,
    account,
    sender,
    tokenIn,
    tokenOut,
    route,
    expected: exactInput ? route.amountOut : route.amountIn + feeAmount,
    worst: exactInput ? minOut : maxIn + feeAmount,
    fee: feeSetting ? { ...feeSetting, amount: feeAmount } : null,
    slippagePercent,
    calls,
  };
}

/**
 * The account's calls. Input in native: the router's ETH entry points with the swap's value. Input in a token:
 * approve the router for exactly what it may take, then swap (to native through the ...ForETH functions). The
 * fee transfer (the project's own setting) is not a ruled call: a policy's rules judge the router and token calls.
 */
async function swapCalls(
  db: Queryable,
  ctx: ProjectContext,
  chain: ChainConfig,
  exchange: ChainExchange,
  s: { account: Address; tokenIn: SwapToken; tokenOut: SwapToken; route: Route; exactInput: boolean; minOut: bigint; maxIn: bigint; deadline: bigint; fee: { recipient: Address; amount: bigint } | null },
): Promise<SwapPlan["calls"]> {
  const registered = await registeredContractsAt(db, ctx, chain.chainId, [exchange.router, s.tokenIn.address]);
  // The oldest live registration at the address names the call, for policy rules and the interaction.
  const contractOf = (address: Address) => registered.get(address.toLowerCase())?.[0]?.id ?? null;
  const call = (to: Address, value: bigint, functionName: string, args: readonly unknown[], abi: Abi, ruled: boolean) => {
    const data = encodeFunctionData({ abi, functionName, args } as never);
    const contractId = contractOf(to);
    return {
      to,
      value,
      data,
      ruled: ruled ? { contractId, to, functionName, self: false } : null,
      interaction: { ...(contractId ? { contract: contractId } : {}), to, functionName, functionArgs: args.map(String), value: value.toString() },
    };
  };
  const out: SwapPlan["calls"] = [];
  if (s.fee) {
    out.push(
      s.tokenIn.native
        ? { to: s.fee.recipient, value: s.fee.amount, data: "0x", ruled: null, interaction: { to: s.fee.recipient, value: s.fee.amount.toString(), functionName: "exchangeFee" } }
        : call(s.tokenIn.address, 0n, "transfer", [s.fee.recipient, s.fee.amount], erc20Abi, false),
    );
  }
  const { path, amountIn, amountOut } = s.route;
  const tail = [path, s.account, s.deadline] as const;
  if (s.tokenIn.native) {
    out.push(
      s.exactInput
        ? call(exchange.router, amountIn, "swapExactETHForTokens", [s.minOut, ...tail], routerAbi, true)
        : call(exchange.router, s.maxIn, "swapETHForExactTokens", [amountOut, ...tail], routerAbi, true),
    );
    return out;
  }
  out.push(call(s.tokenIn.address, 0n, "approve", [exchange.router, s.exactInput ? amountIn : s.maxIn], erc20Abi, true));
  const toNative = s.tokenOut.native;
  out.push(
    s.exactInput
      ? call(exchange.router, 0n, toNative ? "swapExactTokensForETH" : "swapExactTokensForTokens", [amountIn, s.minOut, ...tail], routerAbi, true)
      : call(exchange.router, 0n, toNative ? "swapTokensForExactETH" : "swapTokensForExactTokens", [amountOut, s.maxIn, ...tail], routerAbi, true),
  );
  return out;
}

const showToken = (chain: ChainConfig, t: SwapToken) => ({ address: t.native ? "native" : t.address, chainId: chain.chainId, decimals: t.decimals, name: t.name, symbol: t.symbol });

/**
 * The quote: the plan's amounts, and the operation's gas estimated as the swap would be built (the same calls,
 * simulated through the EntryPoint; unsponsored, the account must be able to pay it). The fee is gas × (base fee +
 * tip) at the latest block; estimatedTXGasFeeToken is what a token-charging policy would charge for it.
 */
export async function quoteSwap(db: Queryable, ctx: ProjectContext, input: SwapInput): Promise<QuoteResponse> {
  const sponsor = await loadPolicy(db, ctx, input.policy);
  const plan = await planSwap(db, ctx, input);
  await requireDeployment(plan.chain);
  const { op, estimate } = await estimateUserOperation(plan.chain, {
    sender: plan.sender.address,
    initCode: deploymentOf(plan.sender).initCode,
    callData: encodeAccountCalls(plan.calls),
    sponsored: sponsor !== null,
  });
  const gas = op.preVerificationGas + estimate.validationGas + estimate.callGas;
  const price = (op.maxFeePerGas - op.maxPriorityFeePerGas) / 2n + op.maxPriorityFeePerGas;
  const gasFee = gas * price;
  const policy = sponsor?.policy;
  const tokenFee =
    policy?.sponsorSchema === "fixed_rate"
      ? policy.tokenContractAmount!
      : policy?.sponsorSchema === "charge_custom_tokens"
        ? ((gasFee * BigInt(policy.tokenContractAmount!) + 10n ** 18n - 1n) / 10n ** 18n).toString()
        : undefined;
  const amountOf = (t: SwapToken, value: bigint) => ({ token: showToken(plan.chain, t), value: value.toString() });
  const answerToken = input.tradeType === "EXACT_INPUT" ? plan.tokenOut : plan.tokenIn;
  return {
    amount: amountOf(answerToken, plan.expected),
    amountWithMaxSlippage: amountOf(answerToken, plan.worst),
    slippage: plan.slippagePercent,
    fees: plan.fee ? [{ recipient: plan.fee.recipient, basisPoints: plan.fee.basisPoints, amount: amountOf(plan.tokenIn, plan.fee.amount) }] : [],
    estimatedTXGasFee: gasFee.toString(),
    estimatedTXGasFeeUSD: inUsd(plan.chain.chainId, gasFee),
    ...(tokenFee !== undefined && { estimatedTXGasFeeToken: tokenFee }),
  };
}

/** The swap as a transaction intent of the account: sponsored under `policy` (its rules judge the router and token calls), else paid by the account. */
export async function createSwap(db: Queryable, ctx: ProjectContext, input: SwapInput): Promise<IntentRow> {
  const sponsor = await loadPolicy(db, ctx, input.policy);
  const plan = await planSwap(db, ctx, input);
  await requireDeployment(plan.chain);
  return recordIntent(db, ctx, plan.chain, plan.sender, {
    calls: plan.calls.map(({ to, value, data }) => ({ to, value, data })),
    ruled: plan.calls.flatMap((c) => (c.ruled ? [c.ruled] : [])),
    sponsor,
    cause: "swap",
    interactions: plan.calls.map((c) => c.interaction),
    optimistic: input.optimistic ?? false,
    confirmationBlocks: 5,
  });
}
