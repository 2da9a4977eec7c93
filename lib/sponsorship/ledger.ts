// The sponsorship ledger: each project's balance per mode and chain, and the journal of every change to it.
// Holds are taken before our paymaster's signature leaves the service, settled at the landed op's actualGasCost or
// released; every change of a balance row happens in one transaction with its journal entry, so nothing is lost or
// counted twice through a crash.
import { and, eq, sql } from "drizzle-orm";
import { parseEther } from "viem";
import { envFlag, envText } from "@/lib/config";
import { findChain } from "@/lib/chain/registry";
import type { Queryable, Tx } from "@/lib/db/client";
import { sponsorshipBalances, sponsorshipEntries, sponsorshipHolds } from "@/lib/db/schema";
import { badRequest } from "@/lib/errors";
import { newId } from "@/lib/ids";
import type { ProjectContext } from "@/lib/tenant";
import { declined } from "./declines";

export type HoldRow = typeof sponsorshipHolds.$inferSelect;
export type EntryRow = typeof sponsorshipEntries.$inferSelect;
export type BalanceRow = typeof sponsorshipBalances.$inferSelect;
export type HoldCause = HoldRow["cause"];
export type EntryCause = EntryRow["cause"];

/**
 * What a new project is credited in test mode on a local (development) chain, in the native coin:
 * SPONSORSHIP_LOCAL_CREDIT, default 1. Live mode, and every other chain, start at zero.
 */
export function localCredit(): bigint {
  const raw = envText("SPONSORSHIP_LOCAL_CREDIT");
  if (raw && /^\d+(\.\d{1,18})?$/.test(raw)) return parseEther(raw);
  return parseEther("1");
}

/** Whether holds are enforced (SPONSORSHIP_LEDGER, default on): off, holds are still recorded but never refused. */
export const ledgerEnforced = () => envFlag("SPONSORSHIP_LEDGER") ?? true;

/** A wei amount's USD value at `price` dollars per coin, as a decimal string (6 places), or null without a price. */
export function usdOf(wei: bigint, price: number | string | null | undefined): string | null {
  if (price === null || price === undefined) return null;
  const micro = BigInt(Math.round(Number(price) * 1e6));
  const value = (wei * micro) / 10n ** 18n; // micro-dollars
  const whole = value / 1_000_000n;
  const frac = (value % 1_000_000n).toString().padStart(6, "0");
  return `${whole}.${frac}`;
}

const where = (ctx: ProjectContext, chainId: number) =>
  and(eq(sponsorshipBalances.projectId, ctx.projectId), eq(sponsorshipBalances.livemode, ctx.livemode), eq(sponsorshipBalances.chainId, chainId));

/**
 * The balance row of (project, mode, chain), made on first use: a project's first use of a local chain in test mode
 * credits it localCredit() (once: the row's insert decides), so `npm start` sponsors out of the box.
 */
export async function ensureBalance(db: Queryable, ctx: ProjectContext, chainId: number): Promise<void> {
  const grant = !ctx.livemode && findChain(chainId)?.dev ? localCredit() : 0n;
  const inserted = await db
    .insert(sponsorshipBalances)
    .values({ ...ctx, chainId, credited: grant.toString() })
    .onConflictDoNothing()
    .returning({ chainId: sponsorshipBalances.chainId });
  if (inserted.length > 0 && grant > 0n) {
    await db.insert(sponsorshipEntries).values({
      id: newId("sponsorshipEntry"),
      ...ctx,
      chainId,
      kind: "credit",
      amount: grant.toString(),
      cause: "local_grant",
      note: "test-mode credit of a local chain (SPONSORSHIP_LOCAL_CREDIT)",
    });
  }
}

export interface Balance {
  chainId: number;
  credited: bigint;
  held: bigint;
  settled: bigint;
  available: bigint;
}

const toBalance = (row: BalanceRow): Balance => {
  const credited = BigInt(row.credited);
  const held = BigInt(row.held);
  const settled = BigInt(row.settled);
  return { chainId: row.chainId, credited, held, settled, available: credited - held - settled };
};

export async function balanceOf(db: Queryable, ctx: ProjectContext, chainId: number): Promise<Balance> {
  await ensureBalance(db, ctx, chainId);
  const [row] = await db.select().from(sponsorshipBalances).where(where(ctx, chainId));
  return toBalance(row!);
}

export interface HoldRequest {
  chainId: number;
  amount: bigint;
  cause: HoldCause;
  /** The coin's USD price now (read before the transaction: no remote call inside it), or null. */
  usdPrice: number | null;
  intentId?: string | null;
  sponsoredOperationId?: string | null;
  policyId?: string | null;
  playerId?: string | null;
  accountId?: string | null;
  expiresAt?: Date | null;
  /**
   * The chain's clock when the operation is sponsored (sponsorshipClock in lib/sponsorship/budgets.ts, the value the
   * policy's evaluation used): budgets count holds in their period by it. Without it, the database's now().
   */
  chainTime?: Date | null;
}

const weiText = (n: bigint) => n.toString();

/**
 * Holds `amount` against the project's balance on the chain, or declines with balance_insufficient. Atomic: the
 * balance row's conditional UPDATE locks it, so concurrent holds are decided one after another against what the
 * previous ones left. Must run in the transaction that records what is held for.
 */
export async function hold(tx: Tx, ctx: ProjectContext, request: HoldRequest): Promise<HoldRow> {
  await ensureBalance(tx, ctx, request.chainId);
  const amount = weiText(request.amount);
  const enough = ledgerEnforced() ? sql`${sponsorshipBalances.credited} - ${sponsorshipBalances.held} - ${sponsorshipBalances.settled} >= ${amount}::numeric` : undefined;
  const updated = await tx
    .update(sponsorshipBalances)
    .set({ held: sql`${sponsorshipBalances.held} + ${amount}::numeric`, updatedAt: sql`now()` })
    .where(and(where(ctx, request.chainId), enough))
    .returning();
  if (updated.length === 0) {
    const [row] = await tx.select().from(sponsorshipBalances).where(where(ctx, request.chainId));
    const available = row ? toBalance(row).available : 0n;
    throw declined(
      "balance_insufficient",
      `The project's sponsorship balance on chain ${request.chainId} has ${available} wei available; this operation may cost up to ${request.amount} wei. Fund it (see GET /v1/sponsorship/balances).`,
      { policy: request.policyId ?? undefined, remaining: (available > 0n ? available : 0n).toString(), chainId: request.chainId, required: amount },
    );
  }
  const [held] = await tx
    .insert(sponsorshipHolds)
    .values({
      id: newId("sponsorshipHold"),
      ...ctx,
      chainId: request.chainId,
      status: "held",
      amount,
      usdPrice: request.usdPrice === null ? null : String(request.usdPrice),
      cause: request.cause,
      intentId: request.intentId ?? null,
      sponsoredOperationId: request.sponsoredOperationId ?? null,
      policyId: request.policyId ?? null,
      playerId: request.playerId ?? null,
      accountId: request.accountId ?? null,
      expiresAt: request.expiresAt ?? null,
      ...(request.chainTime && { chainTime: request.chainTime }),
    })
    .returning();
  await journal(tx, held!, "hold", request.amount);
  return held!;
}

async function journal(tx: Queryable, h: HoldRow, kind: HoldEntryKind, amount: bigint) {
  await tx.insert(sponsorshipEntries).values(holdEntry(h, kind, amount));
}

/** What a change to a hold journals: reversal undoes a settle entry whose landing left the chain. */
export type HoldEntryKind = "hold" | "settle" | "release" | "reversal";

/** The journal entry of a change to a hold: its amount (and USD at the hold's price), cause and what it is for. */
export function holdEntry(h: HoldRow, kind: HoldEntryKind, amount: bigint) {
  return {
    id: newId("sponsorshipEntry"),
    projectId: h.projectId,
    livemode: h.livemode,
    chainId: h.chainId,
    kind,
    amount: weiText(amount),
    usd: usdOf(amount, h.usdPrice),
    cause: h.cause,
    holdId: h.id,
    intentId: h.intentId,
    sponsoredOperationId: h.sponsoredOperationId,
    policyId: h.policyId,
    playerId: h.playerId,
    accountId: h.accountId,
  };
}

/** The balance row a hold is of. */
export const balanceOfHold = (h: Pick<HoldRow, "projectId" | "livemode" | "chainId">) =>
  and(eq(sponsorshipBalances.projectId, h.projectId), eq(sponsorshipBalances.livemode, h.livemode), eq(sponsorshipBalances.chainId, h.chainId));

/**
 * Settles a live hold at what the operation cost (the rest of it released); once only: a hold already settled or
 * released is left as it is (false). Run it in the transaction that records the landing.
 */
export async function settleHold(tx: Tx, holdId: string, actualCost: bigint): Promise<boolean> {
  const [h] = await tx
    .update(sponsorshipHolds)
    .set({ status: "settled", settledAmount: weiText(actualCost), updatedAt: sql`now()` })
    .where(and(eq(sponsorshipHolds.id, holdId), eq(sponsorshipHolds.status, "held")))
    .returning();
  if (!h) return false;
  const amount = BigInt(h.amount);
  await tx
    .update(sponsorshipBalances)
    .set({
      held: sql`${sponsorshipBalances.held} - ${h.amount}::numeric`,
      settled: sql`${sponsorshipBalances.settled} + ${weiText(actualCost)}::numeric`,
      updatedAt: sql`now()`,
    })
    .where(balanceOfHold(h));
  await journal(tx, h, "settle", actualCost);
  if (amount > actualCost) await journal(tx, h, "release", amount - actualCost);
  return true;
}

/** Releases a live hold whole (the operation will never land); false when it was no longer held. */
export async function releaseHold(tx: Tx, holdId: string): Promise<boolean> {
  const [h] = await tx
    .update(sponsorshipHolds)
    .set({ status: "released", updatedAt: sql`now()` })
    .where(and(eq(sponsorshipHolds.id, holdId), eq(sponsorshipHolds.status, "held")))
    .returning();
  if (!h) return false;
  await tx
    .update(sponsorshipBalances)
    .set({ held: sql`${sponsorshipBalances.held} - ${h.amount}::numeric`, updatedAt: sql`now()` })
    .where(balanceOfHold(h));
  await journal(tx, h, "release", BigInt(h.amount));
  return true;
}

/** The live hold of an intent, if any. */
export async function intentHold(db: Queryable, intentId: string): Promise<HoldRow | null> {
  const [h] = await db.select().from(sponsorshipHolds).where(and(eq(sponsorshipHolds.intentId, intentId), eq(sponsorshipHolds.status, "held")));
  return h ?? null;
}

/** The hold of an intent, whatever its state (an intent has at most one). */
export async function intentHoldAny(db: Queryable, intentId: string): Promise<HoldRow | null> {
  const [h] = await db.select().from(sponsorshipHolds).where(eq(sponsorshipHolds.intentId, intentId));
  return h ?? null;
}

export interface CreditRequest {
  chainId: number;
  /** Positive for a credit; a correction may be negative (a debit). */
  amount: bigint;
  cause: "funding" | "deposit" | "correction";
  usdPrice?: number | null;
  /** A deposit's `txHash:logIndex` (credited once per block: a second credit of it is a no-op), or who credited. */
  reference?: string | null;
  note?: string | null;
  /** A deposit's block: a reorg that removes it reverses the credit. */
  block?: { number: number; hash: string };
}

/**
 * Credits (or, a negative correction, debits) the project's balance: the balance row and its journal entry in one
 * transaction. A deposit already credited (same chain, reference and block) is not credited again: returns null.
 */
export async function credit(db: Queryable, ctx: ProjectContext, request: CreditRequest): Promise<EntryRow | null> {
  if (request.amount === 0n) throw badRequest("The amount must not be zero.", { amount: { value: "0", message: "must not be zero" } });
  return db.transaction(async (tx) => {
    await ensureBalance(tx, ctx, request.chainId);
    const kind = request.amount > 0n ? "credit" : "debit";
    const abs = request.amount > 0n ? request.amount : -request.amount;
    const [entry] = await tx
      .insert(sponsorshipEntries)
      .values({
        id: newId("sponsorshipEntry"),
        ...ctx,
        chainId: request.chainId,
        kind,
        amount: weiText(abs),
        usd: usdOf(abs, request.usdPrice),
        cause: request.cause,
        reference: request.reference ?? null,
        note: request.note ?? null,
        blockNumber: request.block?.number ?? null,
        blockHash: request.block?.hash ?? null,
      })
      .onConflictDoNothing()
      .returning();
    if (!entry) return null;
    await tx
      .update(sponsorshipBalances)
      .set({ credited: sql`${sponsorshipBalances.credited} + ${weiText(request.amount)}::numeric`, updatedAt: sql`now()` })
      .where(where(ctx, request.chainId));
    return entry;
  });
}
