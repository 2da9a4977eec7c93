import { and, eq, gt, inArray, isNull, sql } from "drizzle-orm";
import { BlockNotFoundError, type Address, type Hex } from "viem";
import { publicClient } from "@/lib/chain/clients";
import { blockAt } from "@/lib/chain/coalesce";
import { message } from "@/lib/chain/multicall";
import { findChain, type ChainConfig } from "@/lib/chain/registry";
import type { Db, Queryable } from "@/lib/db/client";
import { contracts, tokenIndexCursors, tokenTransfers } from "@/lib/db/schema";
import { nftEvents, tokenKind } from "./tokens";
import { envNumber, type SettingName } from "@/lib/config";
import { chunksOf } from "@/lib/chunks";

/**
 * The NFT transfer index: ERC-721 Transfer and ERC-1155 TransferSingle/TransferBatch logs of
 * registered contracts, read incrementally per (chain, contract) from a cursor (the last block read
 * and its hash) into token_transfers, from which holdings are summed. Contracts whose cursors stand
 * at the same block are read together, one eth_getLogs per range, so a chain whose contracts have
 * caught up costs one call per pass. Reorgs: each pass first checks the cursor block's hash; a
 * changed hash (or a cursor past the head: a reset dev chain) drops the last REORG_DEPTH blocks of
 * transfers and reads them again. Writes are guarded by the cursor they started from, so two
 * instances (or a request's catch-up and the background function) never store a range twice.
 */

const envInt = (name: SettingName, fallback: number) => envNumber(name, fallback, { above: 0, integer: true });

/** The knobs, read at each call (tests and operators set them by environment). */
export const indexerSettings = () => ({
  /** Blocks dropped and read again when the cursor block's hash changed: the deepest reorg survived. */
  reorgDepth: envInt("INVENTORY_REORG_DEPTH", 12),
  /** Blocks per eth_getLogs on configured chains (providers cap ranges); dev chains take far more. */
  logRange: envInt("INVENTORY_LOG_RANGE", 2_000),
  /** Where a newly registered contract's index starts on configured chains: this many blocks back from the head (dev chains: block 0). */
  lookback: envInt("INVENTORY_LOOKBACK_BLOCKS", 100_000),
});
const DEV_LOG_RANGE = 1_000_000;
const ADDRESSES_PER_CALL = 100;

export interface IndexSummary {
  chainId: number;
  contracts: number;
  head: number;
  /** Every contract's cursor reached the head. */
  caughtUp: boolean;
  inserted: number;
  rewound: number;
}

type Cursor = { contract: string; blockNumber: number | null; blockHash: string | null };

class CursorMoved extends Error {}

/** Transfers rows from decoded logs (one per token of a batch). */
function transferRows(chainId: number, logs: Awaited<ReturnType<typeof readLogs>>, timestamps: Map<bigint, number>) {
  return logs.flatMap((log): (typeof tokenTransfers.$inferInsert)[] => {
    const base = {
      chainId,
      contract: log.address.toLowerCase(),
      blockNumber: Number(log.blockNumber),
      blockHash: log.blockHash,
      logIndex: log.logIndex,
      transactionHash: log.transactionHash,
      blockTimestamp: timestamps.get(log.blockNumber)!,
    };
    const args = log.args as Record<string, unknown>;
    const from = String(args.from).toLowerCase();
    const to = String(args.to).toLowerCase();
    if (log.eventName === "Transfer") return [{ ...base, batchIndex: 0, standard: "ERC721" as const, fromAddress: from, toAddress: to, tokenId: String(args.tokenId), amount: "1" }];
    if (log.eventName === "TransferSingle") return [{ ...base, batchIndex: 0, standard: "ERC1155" as const, fromAddress: from, toAddress: to, tokenId: String(args.id), amount: String(args.value) }];
    const ids = args.ids as bigint[];
    const values = args.values as bigint[];
    return ids.map((id, i) => ({ ...base, batchIndex: i, standard: "ERC1155" as const, fromAddress: from, toAddress: to, tokenId: id.toString(), amount: String(values[i] ?? 0n) }));
  });
}

async function readLogs(chain: ChainConfig, addresses: Address[], fromBlock: bigint, toBlock: bigint) {
  // strict: an ERC-20 Transfer (same topic, three topics) fails to decode as ERC-721's and is left out.
  return publicClient(chain).getLogs({ address: addresses, events: nftEvents, fromBlock, toBlock, strict: true });
}

/** Each log's block timestamp: from the log where the node includes it, else one block header per block. */
async function blockTimestamps(chain: ChainConfig, logs: { blockNumber: bigint; blockTimestamp?: bigint | null }[]) {
  const timestamps = new Map<bigint, number>();
  for (const log of logs) if (log.blockTimestamp != null) timestamps.set(log.blockNumber, Number(log.blockTimestamp));
  const missing = [...new Set(logs.map((l) => l.blockNumber))].filter((n) => !timestamps.has(n));
  for (let i = 0; i < missing.length; i += 20) {
    await Promise.all(missing.slice(i, i + 20).map(async (n) => timestamps.set(n, Number((await blockAt(chain, n)).timestamp))));
  }
  return timestamps;
}

async function blockHashAt(chain: ChainConfig, blockNumber: number): Promise<Hex | null> {
  try {
    return (await publicClient(chain).getBlock({ blockNumber: BigInt(blockNumber) })).hash;
  } catch (err) {
    if (err instanceof BlockNotFoundError) return null;
    throw err;
  }
}

const sameCursor = (blockNumber: number | null) => (blockNumber === null ? isNull(tokenIndexCursors.blockNumber) : eq(tokenIndexCursors.blockNumber, blockNumber));

/** Moves the group's cursors from `from` to `to` and stores its rows, all or nothing: another writer that moved them first wins. */
async function advance(db: Db, chainId: number, group: string[], from: number | null, to: { blockNumber: number | null; blockHash: string | null }, write: (tx: Queryable) => Promise<void>) {
  await db.transaction(async (tx) => {
    const moved = await tx
      .update(tokenIndexCursors)
      .set({ blockNumber: to.blockNumber, blockHash: to.blockHash, updatedAt: sql`now()` })
      .where(and(eq(tokenIndexCursors.chainId, chainId), inArray(tokenIndexCursors.contract, group), sameCursor(from)))
      .returning({ contract: tokenIndexCursors.contract });
    if (moved.length !== group.length) throw new CursorMoved();
    await write(tx);
  });
}

/**
 * Brings the index of `addresses` on `chain` up to the chain's head, or as far as it gets before
 * `deadline` (ms since the epoch). Safe to run from several places at once.
 */
export async function indexChain(db: Db, chain: ChainConfig, addresses: string[], options: { deadline?: number } = {}): Promise<IndexSummary> {
  const settings = indexerSettings();
  const range = chain.dev ? DEV_LOG_RANGE : settings.logRange;
  const deadline = options.deadline ?? Date.now() + 8_000;
  const wanted = [...new Set(addresses.map((a) => a.toLowerCase()))];
  const summary: IndexSummary = { chainId: chain.chainId, contracts: wanted.length, head: 0, caughtUp: wanted.length === 0, inserted: 0, rewound: 0 };
  if (wanted.length === 0) return summary;
  await db
    .insert(tokenIndexCursors)
    .values(wanted.map((contract) => ({ chainId: chain.chainId, contract })))
    .onConflictDoNothing();
  const client = publicClient(chain);
  const checked = new Set<string>(); // groups whose cursor hash was checked in this call (once is enough)
  for (let round = 0; round < 1_000; round++) {
    const head = Number(await client.getBlockNumber({ cacheTime: 0 }));
    summary.head = head;
    const cursors: Cursor[] = await db
      .select({ contract: tokenIndexCursors.contract, blockNumber: tokenIndexCursors.blockNumber, blockHash: tokenIndexCursors.blockHash })
      .from(tokenIndexCursors)
      .where(and(eq(tokenIndexCursors.chainId, chain.chainId), inArray(tokenIndexCursors.contract, wanted)));
    const groups = new Map<string, { cursor: Cursor; contracts: string[] }>();
    for (const c of cursors) {
      const key = `${c.blockNumber}:${c.blockHash}`;
      const group = groups.get(key) ?? groups.set(key, { cursor: c, contracts: [] }).get(key)!;
      group.contracts.push(c.contract);
    }
    // The furthest behind first: the groups then meet at the head and are read together from then on
    // (at most ADDRESSES_PER_CALL contracts per eth_getLogs, which nodes bound).
    const ordered = [...groups.values()]
      .sort((a, b) => (a.cursor.blockNumber ?? -1) - (b.cursor.blockNumber ?? -1))
      .flatMap(({ cursor, contracts: all }) => chunksOf(all, ADDRESSES_PER_CALL).map((contracts) => ({ cursor, contracts })));
    let progressed = false;
    for (const { cursor, contracts: group } of ordered) {
      if (Date.now() > deadline) return summary;
      try {
        const key = `${cursor.blockNumber}:${cursor.blockHash}`;
        // A configured chain's node behind the cursor is most likely one lagging behind another: wait for it.
        if (cursor.blockNumber !== null && cursor.blockNumber > head && !chain.dev) continue;
        if (cursor.blockNumber !== null && !checked.has(key)) {
          const hash = cursor.blockNumber > head ? null : await blockHashAt(chain, cursor.blockNumber);
          if (hash !== cursor.blockHash) {
            // Reorged (or a dev chain reset below the cursor: start over): forget the last blocks, read them again.
            const back = hash === null && cursor.blockNumber > head ? -1 : cursor.blockNumber - settings.reorgDepth;
            const to = back < 0 ? { blockNumber: null, blockHash: null } : { blockNumber: back, blockHash: await blockHashAt(chain, back) };
            await advance(db, chain.chainId, group, cursor.blockNumber, to, async (tx) => {
              await tx
                .delete(tokenTransfers)
                .where(and(eq(tokenTransfers.chainId, chain.chainId), inArray(tokenTransfers.contract, group), gt(tokenTransfers.blockNumber, back)));
            });
            summary.rewound += group.length;
            progressed = true;
            continue;
          }
          checked.add(key);
        }
        if (cursor.blockNumber !== null && cursor.blockNumber >= head) continue;
        const fromBlock = cursor.blockNumber !== null ? cursor.blockNumber + 1 : chain.dev ? 0 : Math.max(0, head - settings.lookback);
        const toBlock = Math.min(head, fromBlock + range - 1);
        // The range end's hash before its logs: a reorg in between shows as a changed hash next time.
        const toHash = await blockHashAt(chain, toBlock);
        if (!toHash) continue;
        const logs = await readLogs(chain, group as Address[], BigInt(fromBlock), BigInt(toBlock));
        const rows = transferRows(chain.chainId, logs, await blockTimestamps(chain, logs));
        await advance(db, chain.chainId, group, cursor.blockNumber, { blockNumber: toBlock, blockHash: toHash }, async (tx) => {
          for (let i = 0; i < rows.length; i += 500) await tx.insert(tokenTransfers).values(rows.slice(i, i + 500)).onConflictDoNothing();
        });
        checked.add(`${toBlock}:${toHash}`);
        summary.inserted += rows.length;
        progressed = true;
      } catch (err) {
        if (!(err instanceof CursorMoved)) throw err;
        progressed = true; // someone else moved these cursors: look again
      }
    }
    if (!progressed) {
      summary.caughtUp = true;
      return summary;
    }
  }
  return summary;
}

/** Every registered, not deleted contract that may hold NFTs (not an ERC-20 by its ABI), by configured chain. */
export async function indexedContracts(db: Db): Promise<Map<number, string[]>> {
  const rows = await db.select({ chainId: contracts.chainId, address: contracts.address, abi: contracts.abi }).from(contracts).where(eq(contracts.deleted, false));
  const byChain = new Map<number, Set<string>>();
  for (const row of rows) {
    if (tokenKind(row.abi) === "erc20" || !findChain(row.chainId)) continue;
    byChain.set(row.chainId, (byChain.get(row.chainId) ?? new Set()).add(row.address.toLowerCase()));
  }
  return new Map([...byChain].map(([chainId, set]) => [chainId, [...set]]));
}

/** One pass over every chain (the background function's step): each chain on its own, a failing chain reported, not fatal. */
export async function indexAll(db: Db, options: { deadline?: number } = {}) {
  const byChain = await indexedContracts(db);
  return Promise.all(
    [...byChain].map(async ([chainId, addresses]) => {
      try {
        return await indexChain(db, findChain(chainId)!, addresses, options);
      } catch (err) {
        return { chainId, contracts: addresses.length, error: message(err) };
      }
    }),
  );
}
