import { erc20Abi, isAddressEqual, type Abi, type Address } from "viem";
import { onChain, publicClient } from "@/lib/chain/clients";
import { viemChain, type ChainConfig } from "@/lib/chain/registry";
import { badRequest } from "@/lib/errors";
import { routerAbi } from "./abi";
import { localExchange } from "./deployment";
import { processSingleton } from "@/lib/singleton";

/** The v2 router a chain swaps through, its WETH and the tokens routes may pass through. */
export interface ChainExchange {
  router: Address;
  weth: Address;
  /** Candidate intermediate tokens: WETH, and on a local chain the demo tokens. */
  bases: Address[];
}

const wethOf = processSingleton("routerWeth", () => new Map<string, Address>());

/**
 * The chain's exchange: its configured router (WETH as configured, else the router's own WETH()), or on a
 * development chain the local Uniswap v2 deployment. A chain with neither answers a 400 naming chainId.
 */
export async function exchangeFor(chain: ChainConfig): Promise<ChainExchange> {
  if (chain.router) {
    const key = `${chain.chainId}:${chain.router}`;
    let weth = chain.weth ?? wethOf.get(key);
    if (!weth) {
      weth = await onChain(chain, () => publicClient(chain).readContract({ address: chain.router!, abi: routerAbi, functionName: "WETH" }));
      wethOf.set(key, weth);
    }
    return { router: chain.router, weth, bases: [weth] };
  }
  if (chain.dev) {
    const local = localExchange();
    return { router: local.router, weth: local.weth, bases: [local.weth, ...local.tokens.map((t) => t.address)] };
  }
  throw badRequest(
    `Chain ${chain.chainId} has no exchange: swaps need a Uniswap-v2-compatible router in its configuration (router and weth in CHAINS, or CHAIN_${chain.chainId}_ROUTER and CHAIN_${chain.chainId}_WETH).`,
    { chainId: { value: chain.chainId, message: "no exchange router configured" } },
  );
}

/** Every simple path from `from` to `to` of at most `maxHops` pools, through distinct intermediate tokens. */
export function candidatePaths(from: Address, to: Address, bases: Address[], maxHops: number): Address[][] {
  const via = bases.filter((b) => !isAddressEqual(b, from) && !isAddressEqual(b, to));
  const paths: Address[][] = [];
  const walk = (path: Address[]) => {
    if (path.length - 1 >= maxHops) return;
    paths.push([...path, to]);
    for (const next of via) if (!path.some((p) => isAddressEqual(p, next))) walk([...path, next]);
  };
  walk([from]);
  return paths;
}

export interface TokenMeta {
  address: Address;
  name: string;
  symbol: string;
  decimals: number;
}

export interface Route {
  path: Address[];
  amountIn: bigint;
  amountOut: bigint;
}

/** A read in the one multicall of a quote. */
type Read = { address: Address; abi: Abi; functionName: string; args?: readonly unknown[] };

/**
 * One multicall (Multicall3 where the chain declares it, otherwise deployless) of the reads a quote needs:
 * failures come back as null instead of failing the others.
 */
export async function readAll(chain: ChainConfig, reads: Read[]): Promise<(unknown | null)[]> {
  const multicall3 = viemChain(chain).contracts?.multicall3?.address;
  const results = await onChain(chain, () =>
    publicClient(chain).multicall({ contracts: reads, allowFailure: true, ...(multicall3 ? { multicallAddress: multicall3 } : { deployless: true }) }),
  );
  return results.map((r) => (r.status === "success" ? r.result : null));
}

/** The ERC-20 reads of a token's metadata (decimals, symbol, name). */
export const metadataReads = (token: Address): Read[] =>
  (["decimals", "symbol", "name"] as const).map((functionName) => ({ address: token, abi: erc20Abi as Abi, functionName }));

/** The token from its three metadata results; null when it does not answer decimals like an ERC-20 (no code, say). */
export function tokenMeta(address: Address, [decimals, symbol, name]: (unknown | null)[]): TokenMeta | null {
  if (typeof decimals !== "number") return null;
  return { address, decimals, symbol: typeof symbol === "string" ? symbol : "", name: typeof name === "string" ? name : "" };
}

/** The router reads that price each path: getAmountsOut for an exact input, getAmountsIn for an exact output. */
export const amountReads = (router: Address, paths: Address[][], exactInput: boolean, amount: bigint): Read[] =>
  paths.map((path) => ({ address: router, abi: routerAbi as Abi, functionName: exactInput ? "getAmountsOut" : "getAmountsIn", args: [amount, path] }));

/** The best priced path: the most out for an exact input, the least in for an exact output; null when none has liquidity. */
export function bestRoute(paths: Address[][], results: (unknown | null)[], exactInput: boolean): Route | null {
  let best: Route | null = null;
  paths.forEach((path, i) => {
    const amounts = results[i] as readonly bigint[] | null;
    if (!amounts || amounts.length !== path.length) return;
    const route = { path, amountIn: amounts[0]!, amountOut: amounts[amounts.length - 1]! };
    if (route.amountIn === 0n || route.amountOut === 0n) return;
    if (!best || (exactInput ? route.amountOut > best.amountOut : route.amountIn < best.amountIn)) best = route;
  });
  return best;
}
