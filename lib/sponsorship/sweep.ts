// Holds whose signatures can no longer land: released (or brought down to the most of those that still can). A
// signature of our paymaster can no longer land once a block stamped after its validUntil is confirmed, or once its
// sender's nonce is used on chain by any op (ours, another paymaster's, the account's own). Read at the confirmed
// block, so a reorg above it changes nothing here.
import { and, asc, eq, exists, inArray, lt, notExists, or, sql } from "drizzle-orm";
import { alias } from "drizzle-orm/pg-core";
import { getAbiItem, type Address, type PublicClient } from "viem";
import { entryPointAbi } from "@/contracts/artifacts";
import type { ChainConfig } from "@/lib/chain/registry";
import type { Db } from "@/lib/db/client";
import { paymasterSignatures, sponsorshipEntries, sponsorshipHolds, sponsorshipBalances } from "@/lib/db/schema";
import { log } from "@/lib/log";
import { balanceOfHold, holdEntry, releaseHold } from "./ledger";

export interface SweepSummary {
  /** Signatures that died: past validUntil, or their nonce used by another op. */
  expired: number;
  nonceUsed: number;
  /** Holds released (no signature of theirs can land) and brought down (their costliest signatures died). */
  released: string[];
  lowered: number;
}

/** Live signatures whose nonce is looked up on chain per pass (the oldest first): bounded, so a pass stays short. */
const NONCE_CHECKS = 500;
const getNonce = getAbiItem({ abi: entryPointAbi, name: "getNonce" });

/** Which live signatures' nonces are used at `block`: EntryPoint.getNonce(sender, key) past the signature's nonce. */
async function usedNonces(client: PublicClient, block: bigint, rows: { id: string; entryPoint: string; sender: string; nonce: string }[]): Promise<string[]> {
  const slots = new Map<string, { entryPoint: Address; sender: Address; key: bigint }>();
  for (const r of rows) {
    const key = BigInt(r.nonce) >> 64n;
    slots.set(`${r.entryPoint}:${r.sender}:${key}`, { entryPoint: r.entryPoint as Address, sender: r.sender as Address, key });
  }
  const entries = [...slots.entries()];
  const results = await client.multicall({
    contracts: entries.map(([, s]) => ({ address: s.entryPoint, abi: [getNonce], functionName: "getNonce", args: [s.sender, s.key] }) as const),
    blockNumber: block,
    allowFailure: true,
    // Without Multicall3 on the chain (anvil has none): one eth_call of a contract that is never deployed.
    deployless: true,
    batchSize: 32_768,
  });
  const next = new Map(entries.map(([k], i) => [k, results[i]!.status === "success" ? (results[i]!.result as bigint) : null]));
  return rows.filter((r) => {
    const current = next.get(`${r.entryPoint}:${r.sender}:${BigInt(r.nonce) >> 64n}`);
    return current !== null && current !== undefined && current > BigInt(r.nonce);
  }).map((r) => r.id);
}

const live = alias(paymasterSignatures, "live_signature");

/**
 * One sweep of a chain at its confirmed block `at` (number and timestamp, read from `client`): signatures past their
 * validUntil die, so do those whose nonce is used; then each held hold none of whose signatures may still land (or be
 * landed, awaiting its settlement) is released, and one whose costliest live signatures died holds the most of the
 * rest. Holds from before signature records go when their window (expiresAt) has passed.
 */
export async function sweepHolds(db: Db, chain: ChainConfig, client: PublicClient, at: { number: bigint; timestamp: bigint }): Promise<SweepSummary> {
  const summary: SweepSummary = { expired: 0, nonceUsed: 0, released: [], lowered: 0 };
  const stamp = new Date(Number(at.timestamp) * 1000);
  const expired = await db
    .update(paymasterSignatures)
    .set({ status: "dead", updatedAt: sql`now()` })
    .where(and(eq(paymasterSignatures.chainId, chain.chainId), eq(paymasterSignatures.status, "live"), lt(paymasterSignatures.validUntil, stamp)))
    .returning({ id: paymasterSignatures.id });
  summary.expired = expired.length;

  const candidates = await db
    .select({ id: paymasterSignatures.id, entryPoint: paymasterSignatures.entryPoint, sender: paymasterSignatures.sender, nonce: paymasterSignatures.nonce })
    .from(paymasterSignatures)
    .where(
      and(eq(paymasterSignatures.chainId, chain.chainId), eq(paymasterSignatures.status, "live")),
    )
    .orderBy(asc(paymasterSignatures.updatedAt))
    .limit(NONCE_CHECKS);
  if (candidates.length) {
    const used = await usedNonces(client, at.number, candidates);
    if (used.length) await db.update(paymasterSignatures).set({ status: "dead", updatedAt: sql`now()` }).where(and(inArray(paymasterSignatures.id, used), eq(paymasterSignatures.status, "live")));
    // The others were looked at now: the next pass looks at those it has not (updatedAt orders the checks).
    const unused = candidates.map((c) => c.id).filter((id) => !used.includes(id));
    if (unused.length) await db.update(paymasterSignatures).set({ updatedAt: sql`now()` }).where(and(inArray(paymasterSignatures.id, unused), eq(paymasterSignatures.status, "live")));
    summary.nonceUsed = used.length;
  }

  // Held holds with no signature that may land or has landed (unsettled): released. Holds without any signature
  // record (from before them) go once their window has passed.
  const mayLand = db
    .select({ one: sql`1` })
    .from(live)
    .where(and(eq(live.holdId, sponsorshipHolds.id), inArray(live.status, ["live", "landed"])));
  const anySignature = db.select({ one: sql`1` }).from(live).where(eq(live.holdId, sponsorshipHolds.id));
  const done = await db
    .select({ id: sponsorshipHolds.id })
    .from(sponsorshipHolds)
    .where(
      and(
        eq(sponsorshipHolds.chainId, chain.chainId),
        eq(sponsorshipHolds.status, "held"),
        notExists(mayLand),
        or(exists(anySignature), lt(sponsorshipHolds.expiresAt, stamp)),
      ),
    )
    .limit(1_000);
  if (done.length) {
    await db.transaction(async (tx) => {
      for (const { id } of done) if (await releaseHold(tx, id)) summary.released.push(id);
    });
  }

  // Holds that hold more than their live signatures can cost (the costlier one died; none is landed): brought down.
  const most = sql`(select max(s.max_cost) from paymaster_signatures s where s.hold_id = sponsorship_holds.id and s.status = 'live')`;
  const over = await db
    .select({ hold: sponsorshipHolds, most: sql<string>`${most}::text` })
    .from(sponsorshipHolds)
    .where(
      and(
        eq(sponsorshipHolds.chainId, chain.chainId),
        eq(sponsorshipHolds.status, "held"),
        sql`${most} < ${sponsorshipHolds.amount}`,
        notExists(db.select({ one: sql`1` }).from(live).where(and(eq(live.holdId, sponsorshipHolds.id), eq(live.status, "landed")))),
      ),
    )
    .limit(1_000);
  if (over.length) {
    await db.transaction(async (tx) => {
      for (const { hold, most: amount } of over) {
        const [h] = await tx
          .update(sponsorshipHolds)
          .set({ amount, updatedAt: sql`now()` })
          .where(and(eq(sponsorshipHolds.id, hold.id), eq(sponsorshipHolds.status, "held"), eq(sponsorshipHolds.amount, hold.amount)))
          .returning();
        if (!h) continue;
        const delta = BigInt(hold.amount) - BigInt(amount);
        await tx
          .update(sponsorshipBalances)
          .set({ held: sql`${sponsorshipBalances.held} - ${delta.toString()}::numeric`, updatedAt: sql`now()` })
          .where(balanceOfHold(h));
        await tx.insert(sponsorshipEntries).values(holdEntry(h, "release", delta));
        summary.lowered++;
      }
    });
  }
  if (summary.expired || summary.nonceUsed || summary.released.length || summary.lowered) {
    log.info({ chainId: chain.chainId, block: Number(at.number), ...summary, released: summary.released.length }, "sponsorship: holds of signatures that can no longer land released");
  }
  return summary;
}
