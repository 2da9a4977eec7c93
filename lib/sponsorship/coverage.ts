// The operator's view of the ledger: per chain, our paymaster's EntryPoint deposit against what every project may
// still spend from it (available + held). The deposit pays for every sponsored operation, so when the projects'
// balances exceed it, a sponsorship the ledger allows may fail on chain: `sponsorship status`, /metrics and /readyz
// say so.
import { sql } from "drizzle-orm";
import { BaseError, ContractFunctionZeroDataError } from "viem";
import { entryPointAbi } from "@/contracts/artifacts";
import { chainKey, publicClient } from "@/lib/chain/clients";
import { ourPaymasters } from "@/lib/chain/contracts";
import { supportedChains, type ChainConfig } from "@/lib/chain/registry";
import { envNumber } from "@/lib/config";
import type { Queryable } from "@/lib/db/client";
import { sponsorshipBalances } from "@/lib/db/schema";
import { processSingleton } from "@/lib/singleton";

/**
 * How long one read of a chain's paymaster deposit serves /metrics and /readyz (SPONSORSHIP_DEPOSIT_CACHE_SECONDS,
 * default 30): probes and scrapes in bursts cost one RPC call per chain per period.
 */
export const depositCacheSeconds = () => envNumber("SPONSORSHIP_DEPOSIT_CACHE_SECONDS", 30, { min: 0 });

interface Entry {
  promise: Promise<bigint>;
  /** Date.now() when the read succeeded; undefined while it runs (callers meanwhile share it). */
  at?: number;
}

const entries = processSingleton("paymasterDeposits", () => new Map<string, Entry>());

/**
 * Our paymasters' deposits at their EntryPoints (v0.6 and v0.8, as the chain offers them), summed, in wei: read anew
 * with `fresh`, else at most depositCacheSeconds() old.
 */
export function paymasterDeposit(chain: ChainConfig, options: { fresh?: boolean } = {}): Promise<bigint> {
  const paymasters = ourPaymasters(chain);
  const key = `${chainKey(chain)}:${paymasters.map((p) => p.paymaster).join(",")}`;
  const entry = entries.get(key);
  if (!options.fresh && entry && (entry.at === undefined || Date.now() - entry.at < depositCacheSeconds() * 1000)) return entry.promise;
  const client = publicClient(chain);
  const fresh: Entry = {
    promise: Promise.all(paymasters.map(({ entryPoint, paymaster }) => client.readContract({ address: entryPoint, abi: entryPointAbi, functionName: "balanceOf", args: [paymaster] })))
      .then((deposits) => deposits.reduce((a, b) => a + b, 0n))
      .then(
        (deposit) => {
          fresh.at = Date.now();
          return deposit;
        },
        (err: unknown) => {
          // A failed read is not kept: the next caller tries again.
          if (entries.get(key) === fresh) entries.delete(key);
          throw err;
        },
      ),
  };
  entries.set(key, fresh);
  return fresh.promise;
}

/** What all projects (both modes) may still spend on each chain: the sum of available + held (credited - settled). */
export async function balancesByChain(db: Queryable): Promise<Map<number, bigint>> {
  const rows = await db
    .select({
      chainId: sponsorshipBalances.chainId,
      owed: sql<string>`coalesce(sum(${sponsorshipBalances.credited} - ${sponsorshipBalances.settled}), 0)::text`,
    })
    .from(sponsorshipBalances)
    .groupBy(sponsorshipBalances.chainId);
  return new Map(rows.map((r) => [r.chainId, BigInt(r.owed)]));
}

export interface ChainCoverage {
  chainId: number;
  name: string;
  livemode: boolean;
  /** Our paymaster's EntryPoint deposit, wei; null when the chain could not be read. */
  deposit: bigint | null;
  /** Every project's available + held on this chain, wei. */
  balances: bigint;
  /** Whether the deposit covers the balances; null when the deposit is unknown. */
  covered: boolean | null;
  /** Why the deposit is unknown (never the RPC URL). */
  error?: string;
}

/**
 * Per configured chain, the deposit against the projects' balances. Chain reads happen outside any transaction and,
 * unless `fresh`, come from the deposit cache; a chain that does not answer is reported, not thrown.
 */
export async function coverage(db: Queryable, options: { fresh?: boolean; chains?: ChainConfig[] } = {}): Promise<ChainCoverage[]> {
  const chains = options.chains ?? supportedChains();
  const [owed, deposits] = await Promise.all([
    balancesByChain(db),
    Promise.all(
      chains.map((chain) =>
        paymasterDeposit(chain, options).then(
          (deposit) => ({ deposit }),
          (err: unknown) => ({ deposit: null, error: depositError(err) }),
        ),
      ),
    ),
  ]);
  return chains.map((chain, i) => {
    const { deposit, error } = deposits[i] as { deposit: bigint | null; error?: string };
    const balances = owed.get(chain.chainId) ?? 0n;
    return {
      chainId: chain.chainId,
      name: chain.name,
      livemode: chain.livemode,
      deposit,
      balances,
      covered: deposit === null ? null : deposit >= balances,
      ...(error && { error }),
    };
  });
}

// The error's kind, never its text: an RPC error carries its URL, which may carry a key.
const depositError = (err: unknown) =>
  err instanceof BaseError && err.walk((e) => e instanceof ContractFunctionZeroDataError) ? "no EntryPoint deployed" : "unreadable";
