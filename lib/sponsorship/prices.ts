// The native coin's USD price per chain, for the ledger's USD values and USD budgets. Where it comes from, first
// that applies: CHAIN_<id>_USD_PRICE (configuration), the price feed at CHAIN_<id>_USD_AGGREGATOR (a Chainlink-style
// AggregatorV3Interface: latestRoundData and decimals, refused when stale), and on a development chain our own
// TestPriceFeed (lib/chain/price-feed), deployed when the chain is prepared. Read before a transaction, never in one.
import { BaseError, ContractFunctionZeroDataError, formatUnits, type Address } from "viem";
import { chainKey, isUnreachable, publicClient } from "@/lib/chain/clients";
import { latestBlock } from "@/lib/chain/coalesce";
import { localPriceFeed } from "@/lib/chain/price-feed";
import type { ChainConfig } from "@/lib/chain/registry";
import { envNumber } from "@/lib/config";
import { log } from "@/lib/log";
import { redact } from "@/lib/redact";
import { processSingleton } from "@/lib/singleton";

/**
 * `USD_PRICE_MAX_AGE_SECONDS` (default 3600, Chainlink's ETH/USD heartbeat on Ethereum): a feed whose latest round
 * is older than this, measured against the chain's latest block (not the wall clock), gives no price.
 * `CHAIN_<id>_USD_PRICE_MAX_AGE_SECONDS` sets it for one chain (feeds with a 24-hour heartbeat want 86400 or more).
 */
export const priceMaxAgeSeconds = (chainId: number): number =>
  envNumber(`CHAIN_${chainId}_USD_PRICE_MAX_AGE_SECONDS`, envNumber("USD_PRICE_MAX_AGE_SECONDS", 3600, { above: 0 }), { above: 0 });

/** `USD_PRICE_CACHE_SECONDS` (default 5; 0 turns the cache off): how long one read of a chain's price feed serves every caller. */
export const priceCacheSeconds = (): number => envNumber("USD_PRICE_CACHE_SECONDS", 5, { min: 0 });

/** Why a chain has no price: nothing configured, the feed's answer too old, the feed unreadable, or its answer not a positive number. */
export type PriceProblem = "unconfigured" | "stale" | "unreadable" | "invalid_answer";

export interface PriceStatus {
  /** The native coin in USD, or null when there is none (then `reason` and `problem` say why). */
  price: number | null;
  /** Where the price comes from: CHAIN_<id>_USD_PRICE, or a price feed (configured, or a dev chain's own). */
  source: "config" | "aggregator" | null;
  /** A sentence saying why there is no price, for an operator or a developer (no RPC URL in it). */
  reason?: string;
  problem?: PriceProblem;
  /** The feed read (source aggregator, or the one that failed). */
  aggregator?: Address;
  /** When the feed's latest round was updated (Unix seconds, chain time), when it was read. */
  updatedAt?: number;
}

/** The chain's native coin in USD, or null when the chain has no usable price (see usdPriceStatus for why). Never throws. */
export async function usdPrice(chain: ChainConfig): Promise<number | null> {
  return (await usdPriceStatus(chain)).price;
}

/** The chain's native coin in USD with where it comes from, or why there is none. Never throws; makes no RPC call when configured. */
export async function usdPriceStatus(chain: ChainConfig): Promise<PriceStatus> {
  if (chain.usdPrice !== null) return { price: chain.usdPrice, source: "config" };
  const configured = chain.usdAggregator ?? null;
  if (configured) return cachedRead(chain, configured, false);
  // A dev chain's own feed has no heartbeat: its answer stands until someone sets another, so it is never stale
  // (a local chain running for hours, or a test moving its time by days, keeps its price).
  if (chain.dev) return cachedRead(chain, localPriceFeed(), true);
  return {
    price: null,
    source: null,
    problem: "unconfigured",
    reason: `Chain ${chain.chainId} has no USD price: the operator sets one with CHAIN_${chain.chainId}_USD_PRICE, or a Chainlink price feed of its native coin with CHAIN_${chain.chainId}_USD_AGGREGATOR.`,
  };
}

const feedAbi = [
  { type: "function", name: "decimals", stateMutability: "view", inputs: [], outputs: [{ type: "uint8" }] },
  {
    type: "function",
    name: "latestRoundData",
    stateMutability: "view",
    inputs: [],
    outputs: [
      { name: "roundId", type: "uint80" },
      { name: "answer", type: "int256" },
      { name: "startedAt", type: "uint256" },
      { name: "updatedAt", type: "uint256" },
      { name: "answeredInRound", type: "uint80" },
    ],
  },
] as const;

interface Entry {
  promise: Promise<PriceStatus>;
  /** Date.now() when the read finished; undefined while it runs (callers meanwhile share it). */
  settledAt?: number;
}

const entries = processSingleton("usdPrices", () => new Map<string, Entry>());
const problems = processSingleton("usdPriceProblems", () => new Map<string, PriceProblem | null>());

/** One read per chain and feed serves every caller for priceCacheSeconds() (and every caller while it runs). */
function cachedRead(chain: ChainConfig, feed: Address, local: boolean): Promise<PriceStatus> {
  const key = `${chainKey(chain)}:${feed}:${local ? "local" : "configured"}`;
  const entry = entries.get(key);
  if (entry && (entry.settledAt === undefined || Date.now() - entry.settledAt < priceCacheSeconds() * 1000)) return entry.promise;
  const fresh: Entry = {
    promise: readFeed(chain, feed, local).then((status) => {
      fresh.settledAt = Date.now();
      noteProblem(chain, key, status);
      return status;
    }),
  };
  entries.set(key, fresh);
  return fresh.promise;
}

async function readFeed(chain: ChainConfig, feed: Address, local: boolean): Promise<PriceStatus> {
  const id = chain.chainId;
  const which = `The USD price feed of chain ${id} (${feed}${local ? ", the development chain's own" : ""})`;
  const none = (problem: PriceProblem, reason: string, updatedAt?: number): PriceStatus => ({
    price: null,
    source: null,
    problem,
    reason,
    aggregator: feed,
    ...(updatedAt !== undefined && { updatedAt }),
  });
  const client = publicClient(chain);
  let round: readonly [bigint, bigint, bigint, bigint, bigint];
  let decimals: number;
  let now: bigint;
  try {
    [round, decimals, now] = await Promise.all([
      client.readContract({ address: feed, abi: feedAbi, functionName: "latestRoundData" }),
      client.readContract({ address: feed, abi: feedAbi, functionName: "decimals" }),
      latestBlock(chain).then((block) => block.timestamp),
    ]);
  } catch (err) {
    return none("unreadable", `${which} could not be read: ${whyUnreadable(err, id, local)}`);
  }
  const [, answer, , updated] = round;
  const updatedAt = Number(updated);
  if (answer <= 0n) return none("invalid_answer", `${which} answers ${formatUnits(answer, decimals)}, not a positive price.`, updatedAt);
  if (updated === 0n) return none("invalid_answer", `${which} has no complete round yet.`, updatedAt);
  const maxAge = priceMaxAgeSeconds(id);
  const age = Number(now - updated);
  if (!local && age > maxAge) {
    return none(
      "stale",
      `${which} is stale: its latest answer is ${duration(age)} old by the chain's clock, more than the ${maxAge} seconds allowed (USD_PRICE_MAX_AGE_SECONDS).`,
      updatedAt,
    );
  }
  return { price: Number(formatUnits(answer, decimals)), source: "aggregator", aggregator: feed, updatedAt };
}

function whyUnreadable(err: unknown, chainId: number, local: boolean): string {
  if (isUnreachable(err)) return "the chain's node did not answer.";
  const zeroData = err instanceof BaseError && err.walk((e) => e instanceof ContractFunctionZeroDataError);
  if (zeroData) {
    return local
      ? "it is not deployed on this chain yet (the service deploys it when it prepares a development chain: npm start, or npm run cli -- chain deploy)."
      : `no contract at that address answers latestRoundData (is CHAIN_${chainId}_USD_AGGREGATOR the feed's proxy address on this chain?).`;
  }
  return `${redact(err instanceof BaseError ? err.shortMessage : String(err)).replace(/\.$/, "")}.`;
}

const duration = (seconds: number) =>
  seconds < 120 ? `${seconds} seconds` : seconds < 7200 ? `${Math.round(seconds / 60)} minutes` : seconds < 172800 ? `${Math.round(seconds / 3600)} hours` : `${Math.round(seconds / 86400)} days`;

/** Logs when a chain's feed starts failing, fails otherwise, or recovers (not every read). */
function noteProblem(chain: ChainConfig, key: string, status: PriceStatus) {
  const problem = status.problem ?? null;
  const before = problems.get(key) ?? null;
  problems.set(key, problem);
  if (problem === before) return;
  if (problem) log.warn({ chainId: chain.chainId, aggregator: status.aggregator, problem }, `USD price: ${status.reason}`);
  else log.info({ chainId: chain.chainId, aggregator: status.aggregator, price: status.price }, "USD price: the chain's price feed answers again");
}
