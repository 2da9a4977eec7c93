// The chain watchers' common loop: a cursor per watcher and chain (chain_cursors), read forward in bounded ranges.
import { and, eq, sql } from "drizzle-orm";
import { envNumber } from "@/lib/config";
import { publicClient } from "@/lib/chain/clients";
import type { ChainConfig } from "@/lib/chain/registry";
import type { Db } from "@/lib/db/client";
import { chainCursors } from "@/lib/db/schema";
import { log } from "@/lib/log";

/**
 * The watcher's settings, read at each call (tests and operators set them by environment). Each, when set, applies to
 * every chain; unset, local (development) chains take a default of their own.
 */
export const watcherSettings = (chain: ChainConfig) => ({
  /**
   * SPONSORSHIP_CONFIRMATIONS: how many blocks a deposit, or an ERC-7677 operation's landing, needs (its own block
   * included) before the ledger counts it: default 12, 1 on local chains. The watchers read no further than that.
   */
  confirmations: envNumber("SPONSORSHIP_CONFIRMATIONS", chain.dev ? 1 : 12, { min: 1, integer: true }),
  /** SPONSORSHIP_WATCH_BLOCK_RANGE: the most blocks one eth_getLogs asks for (providers cap ranges): default 2,000, 100,000 on local chains. */
  blockRange: envNumber("SPONSORSHIP_WATCH_BLOCK_RANGE", chain.dev ? 100_000 : 2_000, { min: 1, integer: true }),
  /**
   * SPONSORSHIP_WATCH_LOOKBACK_BLOCKS: where a watcher's cursor starts on its first run on a configured chain, this
   * many blocks back from the confirmed head (default 10,000; local chains start at block 0).
   */
  lookback: envNumber("SPONSORSHIP_WATCH_LOOKBACK_BLOCKS", 10_000, { min: 0, integer: true }),
});

/** Options of a pass: when to stop (ms since the epoch; a range in flight is finished). */
export interface PassOptions {
  deadline?: number;
}

export interface ScanSummary {
  /** The first and last block read by this pass (null: nothing new to read). */
  fromBlock: number | null;
  toBlock: number | null;
  /** The cursor reached the confirmed head. */
  caughtUp: boolean;
}

/**
 * Reads the chain from the cursor `name` in ranges of at most blockRange blocks, up to the confirmed head (head -
 * confirmations + 1) or the deadline: `read(from, to)` does a range's work (remote calls first, then its own short
 * transactions), then the cursor moves past it, compare-and-set: a range is done at least once, by whoever moves the
 * cursor first (what it does must be idempotent: a crash before the move repeats it). A local chain found below its
 * cursor (reset) is read again from block 0; a configured chain's node behind the cursor is waited for.
 */
export async function scanChain(db: Db, chain: ChainConfig, name: string, read: (from: bigint, to: bigint) => Promise<void>, options: PassOptions = {}): Promise<ScanSummary> {
  const settings = watcherSettings(chain);
  const deadline = options.deadline ?? Date.now() + 8_000;
  const head = await publicClient(chain).getBlockNumber({ cacheTime: 0 });
  const safeHead = head - BigInt(settings.confirmations - 1);
  const summary: ScanSummary = { fromBlock: null, toBlock: null, caughtUp: false };
  const start = chain.dev ? 0n : safeHead - BigInt(settings.lookback) + 1n;
  await db
    .insert(chainCursors)
    .values({ name, chainId: chain.chainId, nextBlock: start > 0n ? start : 0n })
    .onConflictDoNothing();
  for (let round = 0; round < 10_000; round++) {
    const [cursor] = await db
      .select({ nextBlock: chainCursors.nextBlock })
      .from(chainCursors)
      .where(and(eq(chainCursors.name, name), eq(chainCursors.chainId, chain.chainId)));
    const from = cursor!.nextBlock;
    if (from > head + 1n && chain.dev) {
      log.info({ chainId: chain.chainId, cursor: name, nextBlock: from.toString(), head: head.toString() }, "sponsorship watcher: local chain below its cursor (reset): reading it again from block 0");
      await moveCursor(db, name, chain.chainId, from, 0n);
      continue;
    }
    if (from > safeHead) {
      summary.caughtUp = true;
      return summary;
    }
    if (Date.now() > deadline) return summary;
    const last = from + BigInt(settings.blockRange) - 1n;
    const to = last < safeHead ? last : safeHead;
    await read(from, to);
    // Moved by another instance meanwhile: it read this range too; look at the cursor again.
    if (await moveCursor(db, name, chain.chainId, from, to + 1n)) {
      summary.fromBlock ??= Number(from);
      summary.toBlock = Number(to);
    }
  }
  return summary;
}

async function moveCursor(db: Db, name: string, chainId: number, from: bigint, to: bigint): Promise<boolean> {
  const moved = await db
    .update(chainCursors)
    .set({ nextBlock: to, updatedAt: sql`now()` })
    .where(and(eq(chainCursors.name, name), eq(chainCursors.chainId, chainId), eq(chainCursors.nextBlock, from)))
    .returning({ name: chainCursors.name });
  return moved.length > 0;
}
