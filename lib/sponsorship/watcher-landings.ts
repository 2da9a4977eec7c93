// Operations our paymaster signed for outside clients (ERC-7677, lib/paymaster-service/rpc.ts): their holds settled when they
// land, released when the chain has passed their sponsorship window without them (lib/sponsorship/watcher.ts).
import { and, eq, inArray, lt, notExists, or, sql } from "drizzle-orm";
import { alias } from "drizzle-orm/pg-core";
import { getAbiItem, type Hex } from "viem";
import { entryPointAbi } from "@/contracts/artifacts";
import { publicClient } from "@/lib/chain/clients";
import { ourPaymasters } from "@/lib/chain/contracts";
import type { ChainConfig } from "@/lib/chain/registry";
import type { Db } from "@/lib/db/client";
import { sponsoredOperations, sponsorshipHolds, transactionIntents } from "@/lib/db/schema";
import { log } from "@/lib/log";
import { releaseHold, settleHold } from "./ledger";
import { scanChain, type PassOptions, type ScanSummary } from "./watcher-scan";

/** The cursor of the ERC-7677 landings watcher in chain_cursors. */
export const LANDINGS_CURSOR = "sponsorship-erc7677";

export interface LandingSummary extends ScanSummary {
  /** Holds settled at their operation's actualGasCost: hold id → wei (string). */
  settled: Record<string, string>;
  /** Holds released: their window ended before the last block read. */
  released: string[];
}

const userOperationEvent = getAbiItem({ abi: entryPointAbi, name: "UserOperationEvent" });

/** Logs per database lookup of their holds. */
const LOOKUP_BATCH = 200;
const RELEASE_BATCH = 500;

interface Landing {
  userOpHash: string;
  sender: string;
  nonce: string;
  actualGasCost: bigint;
}

/**
 * The live ERC-7677 hold each landing settles. By its userOpHash (sponsored_operations.user_operation_hash); failing
 * that, by its sender and nonce, when it is not an intent's op: a client that asked pm_getPaymasterData twice for one
 * sender and nonce holds two signatures and may land the first, whose hash the record no longer has, and an op of
 * ours for that sender and nonce is one of those. A sender and nonce land once: a record whose hold was already
 * settled is not settled again (a re-signed op that can no longer land is released when its window ends), and a
 * landing two projects' records could claim (an outside sender both sponsor) settles neither by sender and nonce.
 */
async function holdsOf(db: Db, chain: ChainConfig, landings: Landing[]): Promise<Map<string, Landing>> {
  const settled = alias(sponsorshipHolds, "settled_hold");
  const bySettle = new Map<string, Landing>();
  for (let i = 0; i < landings.length; i += LOOKUP_BATCH) {
    const batch = landings.slice(i, i + LOOKUP_BATCH);
    const hashes = batch.map((l) => l.userOpHash);
    const live = await db
      .select({ holdId: sponsorshipHolds.id, hash: sponsoredOperations.userOperationHash, sender: sponsoredOperations.sender, nonce: sponsoredOperations.nonce })
      .from(sponsorshipHolds)
      .innerJoin(sponsoredOperations, eq(sponsoredOperations.id, sponsorshipHolds.sponsoredOperationId))
      .where(
        and(
          eq(sponsorshipHolds.status, "held"),
          eq(sponsorshipHolds.cause, "erc7677"),
          eq(sponsorshipHolds.chainId, chain.chainId),
          or(
            inArray(sql`lower(${sponsoredOperations.userOperationHash})`, hashes),
            inArray(
              sponsoredOperations.sender,
              batch.map((l) => l.sender),
            ),
          ),
          notExists(
            db
              .select({ one: sql`1` })
              .from(settled)
              .where(and(eq(settled.sponsoredOperationId, sponsorshipHolds.sponsoredOperationId), eq(settled.status, "settled"))),
          ),
        ),
      );
    if (live.length === 0) continue;
    const intentOps = new Set(
      (await db.select({ hash: transactionIntents.userOperationHash }).from(transactionIntents).where(inArray(transactionIntents.userOperationHash, hashes))).map((r) =>
        r.hash.toLowerCase(),
      ),
    );
    for (const landing of batch) {
      const exact = live.filter((h) => h.hash.toLowerCase() === landing.userOpHash);
      const bySenderNonce = intentOps.has(landing.userOpHash) ? [] : live.filter((h) => h.sender === landing.sender && h.nonce === landing.nonce);
      const match = exact.length === 1 ? exact[0] : exact.length === 0 && bySenderNonce.length === 1 ? bySenderNonce[0] : undefined;
      if (match && !bySettle.has(match.holdId)) bySettle.set(match.holdId, landing);
      else if (exact.length + bySenderNonce.length > 1 && !match) {
        log.warn({ chainId: chain.chainId, userOpHash: landing.userOpHash, holds: [...exact, ...bySenderNonce].map((h) => h.holdId) }, "ERC-7677 landing matches several holds: none settled by it");
      }
    }
  }
  return bySettle;
}

/**
 * One range: the UserOperationEvents paid by our paymaster settle their ERC-7677 holds at actualGasCost (intents'
 * own ops are the relay's), then the live ERC-7677 holds whose window (expiresAt) ended before the range's last block
 * are released: the EntryPoint refuses a sponsorship past its validUntil, so such an op can no longer land, and every
 * landing up to that block has been read. Chain reads first, then short transactions.
 */
async function readLandings(db: Db, chain: ChainConfig, from: bigint, to: bigint, summary: LandingSummary): Promise<void> {
  const client = publicClient(chain);
  const [perEntryPoint, last] = await Promise.all([
    // Our paymasters at each EntryPoint the chain offers (v0.6, v0.8): the event is the same in both.
    Promise.all(ourPaymasters(chain).map(({ entryPoint, paymaster }) => client.getLogs({ address: entryPoint, event: userOperationEvent, args: { paymaster }, fromBlock: from, toBlock: to, strict: true }))),
    client.getBlock({ blockNumber: to }),
  ]);
  const logs = perEntryPoint.flat();
  const landings: Landing[] = logs.map((l) => ({
    userOpHash: (l.args.userOpHash as Hex).toLowerCase(),
    sender: l.args.sender!.toLowerCase(),
    nonce: l.args.nonce!.toString(),
    actualGasCost: l.args.actualGasCost!,
  }));
  const matches = await holdsOf(db, chain, landings);
  if (matches.size > 0) {
    await db.transaction(async (tx) => {
      for (const [holdId, landing] of matches) {
        if (await settleHold(tx, holdId, landing.actualGasCost)) summary.settled[holdId] = landing.actualGasCost.toString();
      }
    });
    log.info({ chainId: chain.chainId, settled: matches.size }, "ERC-7677 operations landed: their holds settled");
  }
  const passed = new Date(Number(last.timestamp) * 1000);
  for (;;) {
    const expired = await db
      .select({ id: sponsorshipHolds.id })
      .from(sponsorshipHolds)
      .where(and(eq(sponsorshipHolds.status, "held"), eq(sponsorshipHolds.cause, "erc7677"), eq(sponsorshipHolds.chainId, chain.chainId), lt(sponsorshipHolds.expiresAt, passed)))
      .limit(RELEASE_BATCH);
    if (expired.length === 0) break;
    const released: string[] = [];
    await db.transaction(async (tx) => {
      for (const { id } of expired) if (await releaseHold(tx, id)) released.push(id);
    });
    summary.released.push(...released);
    log.info({ chainId: chain.chainId, released: released.length, blockNumber: Number(to) }, "ERC-7677 holds released: the chain passed their sponsorship window without them");
    if (expired.length < RELEASE_BATCH) break;
  }
}

/** Reads the chain's new, confirmed landings of our paymaster's operations from its cursor: settlements and releases (one pass, bounded). */
export async function watchLandings(db: Db, chain: ChainConfig, options: PassOptions = {}): Promise<LandingSummary> {
  const summary: LandingSummary = { fromBlock: null, toBlock: null, caughtUp: false, settled: {}, released: [] };
  const scan = await scanChain(db, chain, LANDINGS_CURSOR, (from, to) => readLandings(db, chain, from, to, summary), options);
  return { ...summary, ...scan };
}
