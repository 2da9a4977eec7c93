// Reconciliation: the chain beside the ledger, per chain and paymaster over a block range of the canonical chain up to
// the confirmation depth (and no further than the follower has read). The invariant: Σ actualGasCost of the
// paymaster's UserOperationEvents = Σ settlements (less reversals) + Σ unattributed (the operator's), and no hold held
// for signatures that can no longer land. `npm run cli -- sponsorship reconcile` prints it; the background function
// (inngest/functions/reconcile.ts) records it every few minutes over the recent blocks, which /readyz, /metrics and the
// dashboard read.
import { and, desc, eq, exists, gte, inArray, lte, lt, min, notExists, or, sql } from "drizzle-orm";
import { alias } from "drizzle-orm/pg-core";
import { envFlag, envNumber } from "@/lib/config";
import { nodeClient } from "@/lib/chain/clients";
import { ourPaymasters } from "@/lib/chain/contracts";
import { readPaidOps, type PaidOp } from "@/lib/chain/paid-ops";
import { supportedChains, type ChainConfig } from "@/lib/chain/registry";
import type { Db, Queryable } from "@/lib/db/client";
import { chainCursors, chainLandings, paymasterSignatures, sponsorshipEntries, sponsorshipHolds, sponsorshipReconciliations } from "@/lib/db/schema";
import { newId } from "@/lib/ids";
import { log } from "@/lib/log";
import { FOLLOWER_CURSOR } from "@/lib/sponsorship/attribution";
import { confirmedThrough, followSettings } from "@/lib/sponsorship/depth";

/** SPONSORSHIP_RECONCILE_BLOCKS: the blocks the background reconciliation reads back from the confirmed head each time. */
export const reconcileBlocks = () => envNumber("SPONSORSHIP_RECONCILE_BLOCKS", 10_000, { min: 1, integer: true });
/** SPONSORSHIP_RECONCILE (default on): off, the background reconciliation does nothing (the CLI still reconciles). */
export const reconcileInBackground = () => envFlag("SPONSORSHIP_RECONCILE") ?? true;

export interface EventSample {
  userOpHash: string;
  transactionHash: string;
  blockNumber: number;
  sender: string;
  nonce: string;
  actualGasCost: string;
}

export interface PaymasterReconciliation {
  version: string;
  entryPoint: string;
  paymaster: string;
  /** The paymaster's UserOperationEvents in the range, on the chain now. */
  chain: { events: number; wei: string };
  /** Σ settle entries less Σ reversals of the landings in the range. */
  settledWei: string;
  /** Events no signature of ours answers for: the operator's. */
  unattributed: { events: number; wei: string; sample: EventSample[] };
  /** Events on chain the ledger has no landing of (the follower missed them), and landings it settled that the chain no longer has. */
  missing: { events: number; wei: string; sample: EventSample[] };
  /** chain.wei - settledWei - unattributed.wei: 0 when the books are the chain. */
  mismatchWei: string;
}

export interface ChainReconciliation {
  chainId: number;
  head: number;
  fromBlock: number;
  toBlock: number;
  paymasters: PaymasterReconciliation[];
  /** Holds still held although none of their signatures can land any more (the follower's next sweep releases them). */
  staleHolds: { count: number; wei: string; ids: string[] };
  /** Every paymaster's mismatch is 0, nothing is unattributed, no hold is stale. */
  balanced: boolean;
}

const sample = (rows: { userOpHash: string; transactionHash: string; blockNumber: number | bigint; sender: string; nonce: string | bigint; actualGasCost: string | bigint }[]): EventSample[] =>
  rows.slice(0, 10).map((r) => ({
    userOpHash: r.userOpHash,
    transactionHash: r.transactionHash,
    blockNumber: Number(r.blockNumber),
    sender: r.sender,
    nonce: r.nonce.toString(),
    actualGasCost: r.actualGasCost.toString(),
  }));

const sum = (values: bigint[]) => values.reduce((a, b) => a + b, 0n);

/** Held holds of the chain none of whose signatures may land (or are landed, awaiting settlement). */
async function staleHolds(db: Queryable, chainId: number, stamp: Date) {
  const s = alias(paymasterSignatures, "s");
  const rows = await db
    .select({ id: sponsorshipHolds.id, amount: sponsorshipHolds.amount })
    .from(sponsorshipHolds)
    .where(
      and(
        eq(sponsorshipHolds.chainId, chainId),
        eq(sponsorshipHolds.status, "held"),
        notExists(db.select({ one: sql`1` }).from(s).where(and(eq(s.holdId, sponsorshipHolds.id), inArray(s.status, ["live", "landed"])))),
        or(exists(db.select({ one: sql`1` }).from(s).where(eq(s.holdId, sponsorshipHolds.id))), lt(sponsorshipHolds.expiresAt, stamp)),
      ),
    );
  return { count: rows.length, wei: sum(rows.map((r) => BigInt(r.amount))).toString(), ids: rows.slice(0, 20).map((r) => r.id) };
}

/**
 * The chain beside the ledger over blocks from..to (default: from the first block the follower covers, to the last it
 * has read at the confirmation depth; `last`: only that many blocks up to there), each paymaster of ours apart, all
 * chain reads from one node.
 */
export async function reconcileChain(db: Db, chain: ChainConfig, range: { from?: number; to?: number; last?: number } = {}): Promise<ChainReconciliation> {
  const client = nodeClient(chain);
  const settings = followSettings(chain);
  const head = await client.getBlock({ blockTag: "latest" });
  const [cursor] = await db.select().from(chainCursors).where(and(eq(chainCursors.name, FOLLOWER_CURSOR), eq(chainCursors.chainId, chain.chainId)));
  const followed = cursor ? Number(cursor.nextBlock) - 1 : -1;
  const confirmed = Number(confirmedThrough(chain, head.number!));
  const to = Math.min(range.to ?? Number.MAX_SAFE_INTEGER, confirmed, followed);
  const [first] = await db.select({ block: min(chainLandings.blockNumber) }).from(chainLandings).where(eq(chainLandings.chainId, chain.chainId));
  const start = range.from ?? (chain.dev ? 0 : (first?.block ?? to - settings.lookback + 1));
  // `last`: only the last blocks of that range (the background run's window).
  const from = Math.max(0, range.last === undefined ? start : Math.max(start, to - range.last + 1));
  const stamp = new Date(Number((to >= 0 ? await client.getBlock({ blockNumber: BigInt(to) }) : head).timestamp) * 1000);
  const stale = await staleHolds(db, chain.chainId, stamp);
  if (to < from) return { chainId: chain.chainId, head: Number(head.number), fromBlock: from, toBlock: to, paymasters: [], staleHolds: stale, balanced: stale.count === 0 };

  const events: PaidOp[] = [];
  for (let start = BigInt(from); start <= BigInt(to); start += BigInt(settings.blockRange)) {
    const end = start + BigInt(settings.blockRange) - 1n < BigInt(to) ? start + BigInt(settings.blockRange) - 1n : BigInt(to);
    events.push(...(await readPaidOps(chain, client, start, end)));
  }
  const landings = await db
    .select()
    .from(chainLandings)
    .where(and(eq(chainLandings.chainId, chain.chainId), gte(chainLandings.blockNumber, from), lte(chainLandings.blockNumber, to)));
  const net = new Map(
    landings.length === 0
      ? []
      : (
          await db
            .select({
              landingId: sponsorshipEntries.landingId,
              wei: sql<string>`coalesce(sum(case ${sponsorshipEntries.kind} when 'settle' then ${sponsorshipEntries.amount} when 'reversal' then -${sponsorshipEntries.amount} else 0 end), 0)::text`,
            })
            .from(sponsorshipEntries)
            .where(inArray(sponsorshipEntries.landingId, landings.map((l) => l.id)))
            .groupBy(sponsorshipEntries.landingId)
        ).map((r) => [r.landingId!, BigInt(r.wei)]),
  );
  const byLog = new Map(landings.map((l) => [`${l.blockHash}:${l.logIndex}`, l]));
  const paymasters = ourPaymasters(chain).map(({ version, entryPoint, paymaster }): PaymasterReconciliation => {
    const mine = events.filter((e) => e.paymaster.toLowerCase() === paymaster.toLowerCase());
    const onChain = new Set(mine.map((e) => `${e.blockHash.toLowerCase()}:${e.logIndex}`));
    const missing = mine.filter((e) => !byLog.has(`${e.blockHash.toLowerCase()}:${e.logIndex}`));
    const theirs = landings.filter((l) => l.paymaster === paymaster.toLowerCase());
    // Landings still counted (settled, not removed) whose log the chain no longer has.
    const gone = theirs.filter((l) => !onChain.has(`${l.blockHash}:${l.logIndex}`) && (net.get(l.id) ?? 0n) !== 0n);
    const unattributed = mine.filter((e) => byLog.get(`${e.blockHash.toLowerCase()}:${e.logIndex}`)?.projectId === null);
    const chainWei = sum(mine.map((e) => e.actualGasCost));
    const settled = sum(theirs.map((l) => net.get(l.id) ?? 0n));
    const unattributedWei = sum(unattributed.map((e) => e.actualGasCost));
    const toSample = (e: PaidOp) => ({ ...e, userOpHash: e.userOpHash, transactionHash: e.transactionHash, sender: e.sender.toLowerCase() });
    return {
      version,
      entryPoint: entryPoint.toLowerCase(),
      paymaster: paymaster.toLowerCase(),
      chain: { events: mine.length, wei: chainWei.toString() },
      settledWei: settled.toString(),
      unattributed: { events: unattributed.length, wei: unattributedWei.toString(), sample: sample(unattributed.map(toSample)) },
      missing: {
        events: missing.length + gone.length,
        wei: (sum(missing.map((e) => e.actualGasCost)) + sum(gone.map((l) => BigInt(l.actualGasCost)))).toString(),
        sample: sample([
          ...missing.map(toSample),
          ...gone.map((l) => ({ userOpHash: l.userOperationHash, transactionHash: l.transactionHash, blockNumber: l.blockNumber, sender: l.sender, nonce: l.nonce, actualGasCost: l.actualGasCost })),
        ]),
      },
      mismatchWei: (chainWei - settled - unattributedWei).toString(),
    };
  });
  const balanced = stale.count === 0 && paymasters.every((p) => p.mismatchWei === "0" && p.unattributed.events === 0);
  return { chainId: chain.chainId, head: Number(head.number), fromBlock: from, toBlock: to, paymasters, staleHolds: stale, balanced };
}

/** Records a reconciliation (one row per paymaster), with a log line: a warning when the books are not the chain. */
export async function recordReconciliation(db: Db, r: ChainReconciliation): Promise<void> {
  if (r.paymasters.length) {
    await db.insert(sponsorshipReconciliations).values(
      r.paymasters.map((p) => ({
        id: newId("sponsorshipReconciliation"),
        chainId: r.chainId,
        entryPoint: p.entryPoint,
        paymaster: p.paymaster,
        fromBlock: r.fromBlock,
        toBlock: r.toBlock,
        chainWei: p.chain.wei,
        settledWei: p.settledWei,
        unattributedWei: p.unattributed.wei,
        unattributedEvents: p.unattributed.events,
        mismatchWei: p.mismatchWei,
        staleHolds: r.staleHolds.count,
        staleHeldWei: r.staleHolds.wei,
      })),
    );
  }
  const summary = {
    chainId: r.chainId,
    fromBlock: r.fromBlock,
    toBlock: r.toBlock,
    paymasters: r.paymasters.map((p) => ({ version: p.version, chainWei: p.chain.wei, settledWei: p.settledWei, unattributedWei: p.unattributed.wei, mismatchWei: p.mismatchWei })),
    staleHolds: r.staleHolds.count,
  };
  if (r.balanced) log.info(summary, "sponsorship reconciled: the ledger is the chain");
  else log.warn(summary, "sponsorship reconciliation: the ledger is NOT the chain (unattributed spend, a mismatch or stale holds)");
}

/** Each chain's latest reconciliation, one row per paymaster: what /readyz, /metrics and the dashboard show. */
export async function latestReconciliations(db: Queryable) {
  const chains = supportedChains().map((c) => c.chainId);
  if (chains.length === 0) return [];
  return db
    .selectDistinctOn([sponsorshipReconciliations.chainId, sponsorshipReconciliations.paymaster])
    .from(sponsorshipReconciliations)
    .where(and(gte(sponsorshipReconciliations.createdAt, sql`now() - interval '1 day'`), inArray(sponsorshipReconciliations.chainId, chains)))
    .orderBy(sponsorshipReconciliations.chainId, sponsorshipReconciliations.paymaster, desc(sponsorshipReconciliations.createdAt));
}
