// The chain follower: the books as a function of the chain. One pass per chain, every few seconds (the background
// function watch-sponsorship), all of its reads from one node so no two heads mix:
//   1. reorgs: the last block read is still the chain's, or everything recorded after a point SPONSORSHIP_REORG_DEPTH
//      blocks back is checked against the chain now: landings removed (settlements reversed), deposits reversed,
//      intents sent back; and those blocks are read again;
//   2. forward to the head: every UserOperationEvent our paymasters paid goes to the one attribution point
//      (lib/sponsorship/attribution.ts), whoever sent it; an intent whose op landed outside the relayer is landed;
//   3. at the confirmation depth: landings settled (still in their block), deposits credited;
//   4. holds whose signatures can no longer land released (lib/sponsorship/sweep.ts).
import { and, eq, gt, inArray, isNull, lte, ne, sql } from "drizzle-orm";
import type { Block, Hex, PublicClient } from "viem";
import { readPaidOps } from "@/lib/chain/paid-ops";
import { nodeClient, nodeFailed } from "@/lib/chain/clients";
import { message } from "@/lib/chain/multicall";
import { supportedChains, type ChainConfig } from "@/lib/chain/registry";
import type { Db, Queryable } from "@/lib/db/client";
import { chainCursors, chainLandings, transactionIntents } from "@/lib/db/schema";
import { landFromChain, unlandIntents } from "@/lib/intents/chain-landing";
import { chainLandedJob, reorgRelayJob } from "@/lib/jobs/messages";
import { sendJobs } from "@/lib/jobs/port";
import { log } from "@/lib/log";
import { metrics } from "@/lib/metrics";
import { FOLLOWER_CURSOR, observe, removeLandings, removeOffRange, settleLandings } from "@/lib/sponsorship/attribution";
import { confirmedThrough, followSettings } from "@/lib/sponsorship/depth";
import { DEPOSITS_CURSOR, depositCreditsAfter, readDeposits, reverseDeposits, type DepositOutcome } from "@/lib/sponsorship/deposits";
import { sweepHolds, type SweepSummary } from "@/lib/sponsorship/sweep";

export interface Reorg {
  /** The last block still the chain's (everything after it was checked); -1: from the start. */
  back: number;
  landings: number;
  deposits: number;
  intents: number;
}

export interface FollowSummary {
  chainId: number;
  head: number;
  /** Blocks read forward by this pass (null: none new). */
  read: { from: number; to: number } | null;
  caughtUp: boolean;
  reorg: Reorg | null;
  /** Landings observed, and settled at the confirmation depth, by this pass. */
  observed: number;
  settled: number;
  deposits: DepositOutcome[];
  sweep: SweepSummary | null;
  /** Intents this pass found landed outside the relayer. */
  landedIntents: string[];
  /** Steps that failed on this pass (a node's error): the next pass does them again. */
  errors: string[];
}

interface Cursor {
  next: bigint;
  hash: string | null;
}

async function cursorOf(db: Queryable, name: string, chainId: number, start: bigint): Promise<Cursor> {
  await db.insert(chainCursors).values({ name, chainId, nextBlock: start > 0n ? start : 0n }).onConflictDoNothing();
  const [row] = await db.select().from(chainCursors).where(and(eq(chainCursors.name, name), eq(chainCursors.chainId, chainId)));
  return { next: row!.nextBlock, hash: row!.blockHash };
}

/** Moves a cursor from `from` (compare-and-set: another instance that moved it first wins); false when it had moved. */
async function moveCursor(db: Queryable, name: string, chainId: number, from: bigint, to: Cursor): Promise<boolean> {
  const moved = await db
    .update(chainCursors)
    .set({ nextBlock: to.next, blockHash: to.hash, updatedAt: sql`now()` })
    .where(and(eq(chainCursors.name, name), eq(chainCursors.chainId, chainId), eq(chainCursors.nextBlock, from)))
    .returning({ name: chainCursors.name });
  return moved.length > 0;
}

/** Block hashes at numbers, as `client` has them now (null: past its head), each read once; `known` adds hashes read with logs. */
function hashesOf(client: PublicClient, head: Block) {
  const memo = new Map<number, Promise<string | null>>();
  const read = new Map<number, string>();
  const known = (n: number, hash: string) => {
    read.set(n, hash.toLowerCase());
    memo.set(n, Promise.resolve(hash.toLowerCase()));
  };
  known(Number(head.number), head.hash!);
  const hashAt = (n: number): Promise<string | null> => {
    if (n > Number(head.number)) return Promise.resolve(null);
    if (!memo.has(n))
      memo.set(
        n,
        client.getBlock({ blockNumber: BigInt(n) }).then((b) => {
          read.set(n, b.hash!.toLowerCase());
          return b.hash!.toLowerCase();
        }),
      );
    return memo.get(n)!;
  };
  /** The hash already read at a number, without reading (inside a transaction). */
  const peek = (n: number): string | undefined => read.get(n);
  return Object.assign(hashAt, { known, peek });
}

/**
 * Rows (anything with a block number and hash) whose block is no longer the chain's: another hash at its number. A
 * block past the reading node's head says nothing (that node lags the one the row was read from); a chain that really
 * got shorter is caught when it grows past the row again.
 */
async function offChain<T extends { blockNumber: number | null; blockHash: string | null }>(rows: T[], hashAt: (n: number) => Promise<string | null>): Promise<T[]> {
  const gone: T[] = [];
  for (const row of rows) {
    if (row.blockNumber === null || row.blockHash === null) continue;
    const now = await hashAt(row.blockNumber);
    if (now !== null && now !== row.blockHash.toLowerCase()) gone.push(row);
  }
  return gone;
}

/**
 * What was recorded in blocks after `after` (up to `through`, when given) whose block is no longer the chain's, undone:
 * landings removed (a settlement reversed), deposits reversed, intents sent back (pending ones relayed again by a job
 * per removed block). The relayer records its landings as it sees them, ahead of the follower; so this runs on every
 * range read as well as after a reorg at the cursor.
 */
async function undoOffChain(db: Db, chain: ChainConfig, hashAt: (n: number) => Promise<string | null>, after: number, through?: number): Promise<Omit<Reorg, "back">> {
  const inRange = <T extends typeof chainLandings.blockNumber | typeof transactionIntents.blockNumber>(column: T) =>
    and(gt(column, after), through === undefined ? undefined : lte(column, through));
  const landings = await offChain(
    await db.select().from(chainLandings).where(and(eq(chainLandings.chainId, chain.chainId), ne(chainLandings.status, "removed"), inRange(chainLandings.blockNumber))),
    hashAt,
  );
  if (landings.length) await db.transaction((tx) => removeLandings(tx, landings.map((l) => l.id)));
  const deposits = await offChain(
    (await depositCreditsAfter(db, chain.chainId, after)).filter((c) => through === undefined || (c.blockNumber ?? 0) <= through),
    hashAt,
  );
  await reverseDeposits(db, deposits);
  const intents = await offChain(
    await db
      .select({ id: transactionIntents.id, blockNumber: transactionIntents.blockNumber, blockHash: transactionIntents.blockHash })
      .from(transactionIntents)
      .where(and(eq(transactionIntents.chainId, chain.chainId), inRange(transactionIntents.blockNumber))),
    hashAt,
  );
  const sent = await unlandIntents(db, chain, intents.map((i) => ({ id: i.id, blockHash: i.blockHash! })));
  const jobs = sent.filter((i) => i.status === "pending").map((i) => reorgRelayJob(i.id, i.projectId, intents.find((g) => g.id === i.id)!.blockHash!));
  if (jobs.length) await sendJobs(jobs);
  return { landings: landings.length, deposits: deposits.length, intents: intents.length };
}

/**
 * The last block the follower read is no longer the chain's (or is past its head: a local chain reset): what was
 * recorded after `back` (SPONSORSHIP_REORG_DEPTH blocks before it) is checked block by block against the chain, and
 * what left it is undone; the cursors go back so those blocks are read again.
 */
async function rewind(db: Db, chain: ChainConfig, client: PublicClient, head: Block, cursor: Cursor): Promise<{ reorg: Reorg; cursor: Cursor }> {
  const last = Number(cursor.next) - 1;
  const back = Math.min(last - followSettings(chain).reorgDepth, Number(head.number));
  const floor = back < -1 ? -1 : back;
  const hashAt = hashesOf(client, head);
  const undone = await undoOffChain(db, chain, hashAt, floor);
  const to: Cursor = { next: BigInt(floor + 1), hash: floor >= 0 ? await hashAt(floor) : null };
  await moveCursor(db, FOLLOWER_CURSOR, chain.chainId, cursor.next, to);
  await db
    .update(chainCursors)
    .set({ nextBlock: to.next, updatedAt: sql`now()` })
    .where(and(eq(chainCursors.name, DEPOSITS_CURSOR), eq(chainCursors.chainId, chain.chainId), gt(chainCursors.nextBlock, to.next)));
  metrics.reorgs.inc({ chain: String(chain.chainId) });
  const reorg = { back: floor, ...undone };
  log.warn({ chainId: chain.chainId, lastRead: last, head: Number(head.number), ...reorg }, "chain follower: the last block read left the chain (reorg); what was recorded after the rewind point is checked against the chain");
  return { reorg, cursor: to };
}

/** Landings seen earlier that are now at the confirmation depth and still in their block: settled. */
async function settleDue(db: Db, chain: ChainConfig, client: PublicClient, head: Block, through: bigint): Promise<number> {
  const due = await db
    .select()
    .from(chainLandings)
    .where(and(eq(chainLandings.chainId, chain.chainId), eq(chainLandings.status, "seen"), lte(chainLandings.blockNumber, Number(through))))
    .orderBy(chainLandings.blockNumber)
    .limit(1_000);
  if (due.length === 0) return 0;
  const gone = new Set((await offChain(due, hashesOf(client, head))).map((l) => l.id));
  // One that left the chain waits for the next pass's reorg check.
  return db.transaction((tx) => settleLandings(tx, due.filter((l) => !gone.has(l.id))));
}

/** Deposits from their cursor up to the confirmation depth, credited. */
async function followDeposits(db: Db, chain: ChainConfig, client: PublicClient, through: bigint, deadline: number): Promise<DepositOutcome[]> {
  const { blockRange, lookback } = followSettings(chain);
  const outcomes: DepositOutcome[] = [];
  let cursor = await cursorOf(db, DEPOSITS_CURSOR, chain.chainId, chain.dev ? 0n : through - BigInt(lookback) + 1n);
  while (cursor.next <= through && Date.now() < deadline) {
    const from = cursor.next;
    const to = from + BigInt(blockRange) - 1n < through ? from + BigInt(blockRange) - 1n : through;
    const read = await readDeposits(db, chain, client, from, to);
    if (await moveCursor(db, DEPOSITS_CURSOR, chain.chainId, from, { next: to + 1n, hash: null })) outcomes.push(...read);
    cursor = await cursorOf(db, DEPOSITS_CURSOR, chain.chainId, 0n);
  }
  return outcomes;
}

/** Intents whose op our paymaster paid landed on chain while the service has them unlanded: recorded, then notified and confirmed by a job. */
async function chainLandedIntents(db: Db, chain: ChainConfig): Promise<string[]> {
  const found = await db
    .select({ intentId: chainLandings.intentId, transactionHash: chainLandings.transactionHash, userOpHash: chainLandings.userOperationHash })
    .from(chainLandings)
    .innerJoin(transactionIntents, eq(transactionIntents.id, chainLandings.intentId))
    .where(
      and(
        eq(chainLandings.chainId, chain.chainId),
        ne(chainLandings.status, "removed"),
        sql`${chainLandings.createdAt} > now() - interval '1 day'`,
        isNull(transactionIntents.blockHash),
        isNull(transactionIntents.transactionHash),
        inArray(transactionIntents.status, ["awaiting_signature", "pending", "broadcast", "failed", "cancelled"]),
      ),
    )
    .limit(500);
  if (found.length === 0) return [];
  const landed = await landFromChain(
    db,
    chain,
    found.map((f) => ({ intentId: f.intentId!, transactionHash: f.transactionHash as Hex, userOpHash: f.userOpHash as Hex })),
  );
  if (landed.length) await sendJobs(landed.map((i) => chainLandedJob(i.id, i.projectId)));
  return landed.map((i) => i.id);
}

/** Thrown to roll back a range's transaction: a landing recorded meanwhile in a block not checked yet. */
const RANGE_AGAIN = new Error("chain follower: a landing was recorded in the range while it was read; reading it again");

/**
 * One pass of the follower over one chain (see the file's comment), bounded by `deadline` (ms since the epoch) for the
 * reading forward; cursors are stored, so a pass cut short is continued by the next, and every step is idempotent.
 */
export async function followChain(db: Db, chain: ChainConfig, options: { deadline?: number } = {}): Promise<FollowSummary> {
  const deadline = options.deadline ?? Date.now() + 8_000;
  const settings = followSettings(chain);
  const client = nodeClient(chain);
  const head = await client.getBlock({ blockTag: "latest" });
  const through = confirmedThrough(chain, head.number!);
  const summary: FollowSummary = { chainId: chain.chainId, head: Number(head.number), read: null, caughtUp: false, reorg: null, observed: 0, settled: 0, deposits: [], sweep: null, landedIntents: [], errors: [] };
  let cursor = await cursorOf(db, FOLLOWER_CURSOR, chain.chainId, chain.dev ? 0n : head.number! - BigInt(settings.lookback) + 1n);
  const last = cursor.next - 1n;
  const lastHash = last < 0n || cursor.hash === null ? null : last > head.number! ? "" : (await client.getBlock({ blockNumber: last })).hash!.toLowerCase();
  if ((lastHash !== null && lastHash !== cursor.hash) || cursor.next > head.number! + 1n) {
    ({ reorg: summary.reorg, cursor } = await rewind(db, chain, client, head, cursor));
  }

  const hashAt = hashesOf(client, head);
  while (cursor.next <= head.number! && Date.now() < deadline) {
    const from = cursor.next;
    const to = from + BigInt(settings.blockRange) - 1n < head.number! ? from + BigInt(settings.blockRange) - 1n : head.number!;
    const toBlock = to === head.number ? head : await client.getBlock({ blockNumber: to });
    const ops = await readPaidOps(chain, client, from, to);
    // The node moved to another chain between the two reads: the next pass sees it at the cursor.
    if (ops.some((op) => op.blockNumber === to && op.blockHash.toLowerCase() !== toBlock.hash!.toLowerCase())) break;
    // What the relayer recorded in these blocks before the follower read them, from a block that has since left the chain
    // (the logs just read give their blocks' hashes).
    for (const op of ops) hashAt.known(Number(op.blockNumber), op.blockHash);
    hashAt.known(Number(to), toBlock.hash!);
    const undone = await undoOffChain(db, chain, hashAt, Number(from) - 1, Number(to));
    const next: Cursor = { next: to + 1n, hash: toBlock.hash!.toLowerCase() };
    // Moving the cursor, then checking every landing recorded in the range against the blocks just read: the relayer
    // records ahead of the cursor only (aheadOfFollower), so one it recorded since the check above is caught here.
    let observed: Awaited<ReturnType<typeof observe>> | null;
    try {
      observed = await db.transaction(async (tx) => {
        if (!(await moveCursor(tx, FOLLOWER_CURSOR, chain.chainId, from, next))) return null;
        const removed = await removeOffRange(tx, chain.chainId, { from, to }, hashAt.peek);
        if (removed === "unchecked") throw RANGE_AGAIN;
        undone.landings += removed.length;
        return observe(tx, ops, through);
      });
    } catch (err) {
      if (err === RANGE_AGAIN) continue;
      throw err;
    }
    if (undone.landings || undone.intents) {
      metrics.reorgs.inc({ chain: String(chain.chainId) });
      log.warn({ chainId: chain.chainId, from: Number(from), to: Number(to), ...undone }, "chain follower: landings recorded ahead of it left the chain (reorg)");
      summary.reorg ??= { back: Number(from) - 1, ...undone };
    }
    if (observed) {
      summary.read = { from: summary.read?.from ?? Number(from), to: Number(to) };
      summary.observed += observed.landings.length;
      summary.settled += observed.settled;
      cursor = next;
    } else cursor = await cursorOf(db, FOLLOWER_CURSOR, chain.chainId, 0n);
  }
  summary.caughtUp = cursor.next > head.number!;
  // Each step on its own: a node's failure in one (a pass makes dozens of requests) leaves the others to do their work.
  const step = async <T>(what: string, work: () => Promise<T>, fallback: T): Promise<T> => {
    try {
      return await work();
    } catch (err) {
      summary.errors.push(`${what}: ${message(err)}`);
      return fallback;
    }
  };
  summary.settled += await step("settling landings at depth", () => settleDue(db, chain, client, head, through), 0);
  summary.deposits = await step("deposits", () => followDeposits(db, chain, client, through, deadline), []);
  summary.landedIntents = await step("intents landed outside the relayer", () => chainLandedIntents(db, chain), []);
  if (through >= 0n) {
    summary.sweep = await step(
      "releasing holds",
      async () => {
        const confirmed = through === head.number ? head : await client.getBlock({ blockNumber: through });
        return sweepHolds(db, chain, client, { number: confirmed.number!, timestamp: confirmed.timestamp });
      },
      null,
    );
  }
  if (summary.errors.length) {
    nodeFailed(chain);
    log.warn({ chainId: chain.chainId, errors: summary.errors }, "chain follower: steps of this pass failed (the next pass does them again)");
  }
  return summary;
}

export type ChainFollow = FollowSummary | { chainId: number; error: string };

/** One pass over every configured chain, side by side; a chain whose node fails is reported, not fatal. */
export async function followAll(db: Db, options: { deadline?: number } = {}): Promise<ChainFollow[]> {
  return Promise.all(
    supportedChains().map(async (chain) => {
      try {
        return await followChain(db, chain, options);
      } catch (err) {
        // The next pass asks the chain's next node, if it has several.
        nodeFailed(chain);
        log.warn({ chainId: chain.chainId, err }, "chain follower: this pass failed");
        return { chainId: chain.chainId, error: message(err) };
      }
    }),
  );
}
