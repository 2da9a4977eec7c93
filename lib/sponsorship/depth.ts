// How the ledger reads a chain: the confirmation depth at which it counts what the chain did, and how far it reads at
// once, looks back and rewinds after a reorg. Read at each call (tests and operators set them by environment); each,
// when set, applies to every chain; unset, local (development) chains take a default of their own.
import { envNumber } from "@/lib/config";
import type { ChainConfig } from "@/lib/chain/registry";

export const followSettings = (chain: ChainConfig) => ({
  /**
   * SPONSORSHIP_CONFIRMATIONS: how many blocks a deposit, or a landing of an operation our paymaster paid, needs (its
   * own block included) before the ledger credits or settles it: default 12, 1 on local chains.
   */
  confirmations: envNumber("SPONSORSHIP_CONFIRMATIONS", chain.dev ? 1 : 12, { min: 1, integer: true }),
  /** SPONSORSHIP_WATCH_BLOCK_RANGE: the most blocks one eth_getLogs asks for (providers cap ranges): default 2,000, 100,000 on local chains. */
  blockRange: envNumber("SPONSORSHIP_WATCH_BLOCK_RANGE", chain.dev ? 100_000 : 2_000, { min: 1, integer: true }),
  /**
   * SPONSORSHIP_WATCH_LOOKBACK_BLOCKS: where the chain follower starts on its first run on a configured chain, this
   * many blocks back from the head (default 10,000; local chains start at block 0).
   */
  lookback: envNumber("SPONSORSHIP_WATCH_LOOKBACK_BLOCKS", 10_000, { min: 0, integer: true }),
  /**
   * SPONSORSHIP_REORG_DEPTH: how many blocks the chain follower reads again when the last block it read left the chain:
   * the deepest reorg the ledger follows (deposits, settlements and intents' landings in them are checked against the
   * new chain). Default 64 (two Ethereum epochs).
   */
  reorgDepth: envNumber("SPONSORSHIP_REORG_DEPTH", 64, { min: 1, integer: true }),
});

/** The last block at the confirmation depth when `head` is the chain's latest: what the ledger may count. */
export const confirmedThrough = (chain: ChainConfig, head: bigint): bigint => head - BigInt(followSettings(chain).confirmations - 1);
