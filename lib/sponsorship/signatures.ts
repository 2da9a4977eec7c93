// Every signature our paymasters issue is a record (paymaster_signatures): an intent's op (each rebuild too) and each
// ERC-7677 pm_getPaymasterData, with its sender, nonce, userOpHash, most cost and validUntil. A hold (one per intent
// or ERC-7677 operation) holds the most of its live signatures: a second signature for the same operation can raise
// what is held, never lower it. The chain follower (lib/follower) kills signatures that can no longer land and
// releases a hold once none of its signatures can.
import { and, eq, inArray, sql } from "drizzle-orm";
import type { Address, Hex } from "viem";
import type { Queryable, Tx } from "@/lib/db/client";
import { paymasterSignatures, sponsorshipBalances, sponsorshipEntries, sponsorshipHolds } from "@/lib/db/schema";
import { newId } from "@/lib/ids";
import { declined } from "./declines";
import { balanceOfHold, holdEntry, ledgerEnforced, type HoldRow } from "./ledger";

export type SignatureRow = typeof paymasterSignatures.$inferSelect;

/** What one signature of our paymaster binds. */
export interface SignatureFacts {
  chainId: number;
  entryPoint: Address;
  paymaster: Address;
  sender: Address;
  nonce: bigint;
  userOperationHash: Hex;
  /** The op's required prefund: the most it can cost the paymaster, wei. */
  maxCost: bigint;
  /** Unix seconds: the EntryPoint refuses the signature in a block stamped later. */
  validUntil: number;
}

/** The row of a signature under `hold` (ids given: an intent's or an ERC-7677 operation's). */
export const signatureRow = (hold: Pick<HoldRow, "id" | "projectId" | "livemode" | "intentId" | "sponsoredOperationId">, facts: SignatureFacts) => ({
  id: newId("paymasterSignature"),
  projectId: hold.projectId,
  livemode: hold.livemode,
  chainId: facts.chainId,
  entryPoint: facts.entryPoint.toLowerCase(),
  paymaster: facts.paymaster.toLowerCase(),
  sender: facts.sender.toLowerCase(),
  nonce: facts.nonce.toString(),
  userOperationHash: facts.userOperationHash.toLowerCase(),
  maxCost: facts.maxCost.toString(),
  validUntil: new Date(facts.validUntil * 1000),
  holdId: hold.id,
  intentId: hold.intentId,
  sponsoredOperationId: hold.sponsoredOperationId,
});

/**
 * Records another signature under a hold (in the transaction that lets it leave the service): the hold grows to the
 * signature's most cost when that is more than it holds (declined with balance_insufficient when the balance cannot
 * cover the difference), never shrinks, and lasts until the latest validUntil of its signatures. A hold released
 * because its earlier signatures expired is held again, whole.
 */
export async function addSignature(tx: Tx, holdId: string, facts: SignatureFacts): Promise<SignatureRow> {
  const [h] = await tx.select().from(sponsorshipHolds).where(eq(sponsorshipHolds.id, holdId)).for("update");
  if (!h) throw new Error(`hold ${holdId} is gone`);
  if (h.status === "settled") throw new Error(`hold ${holdId} is settled: its operation landed, another signature for it cannot`);
  const revived = h.status === "released";
  const delta = revived ? facts.maxCost : facts.maxCost - BigInt(h.amount);
  if (delta > 0n) {
    const enough = ledgerEnforced() ? sql`${sponsorshipBalances.credited} - ${sponsorshipBalances.held} - ${sponsorshipBalances.settled} >= ${delta.toString()}::numeric` : undefined;
    const grown = await tx
      .update(sponsorshipBalances)
      .set({ held: sql`${sponsorshipBalances.held} + ${delta.toString()}::numeric`, updatedAt: sql`now()` })
      .where(and(balanceOfHold(h), enough))
      .returning({ chainId: sponsorshipBalances.chainId });
    if (grown.length === 0) {
      throw declined("balance_insufficient", `The project's sponsorship balance on chain ${h.chainId} cannot cover ${delta} wei more for the operation signed again.`, {
        policy: h.policyId ?? undefined,
        chainId: h.chainId,
      });
    }
    await tx.insert(sponsorshipEntries).values(holdEntry(h, "hold", delta));
  }
  const validUntil = new Date(facts.validUntil * 1000);
  await tx
    .update(sponsorshipHolds)
    .set({
      ...((delta > 0n || revived) && { amount: (revived ? facts.maxCost : BigInt(h.amount) + delta).toString() }),
      ...(revived && { status: "held" as const }),
      expiresAt: revived ? validUntil : sql`greatest(${sponsorshipHolds.expiresAt}, ${validUntil.toISOString()}::timestamptz)`,
      updatedAt: sql`now()`,
    })
    .where(eq(sponsorshipHolds.id, h.id));
  const [row] = await tx.insert(paymasterSignatures).values(signatureRow(h, facts)).returning();
  return row!;
}

/** A hold's signatures. */
export const signaturesOf = (q: Queryable, holdIds: string[]): Promise<SignatureRow[]> =>
  holdIds.length ? q.select().from(paymasterSignatures).where(inArray(paymasterSignatures.holdId, holdIds)) : Promise.resolve([]);
