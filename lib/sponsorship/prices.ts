// The native coin's USD price per chain, for the ledger's USD values and USD budgets.
import type { ChainConfig } from "@/lib/chain/registry";

/** The chain's native coin in USD (CHAIN_<id>_USD_PRICE), or null when the chain has no price. Read before a transaction, never in one. */
export async function usdPrice(chain: ChainConfig): Promise<number | null> {
  return chain.usdPrice;
}
