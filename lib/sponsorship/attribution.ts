// The one attribution point of the ledger: every UserOperationEvent our paymasters paid — sent by our relayer, by
// /rpc, by an outside bundler or by the owner's own handleOps — becomes a landing (chain_landings), matched to the
// signature our paymaster issued for it (by userOpHash, else by sender and nonce), and so to one project and hold.
// At the confirmation depth a landing is settled once at its actualGasCost; a landing whose block left the chain is
// removed, its settlement reversed by a journal entry and its hold held again. An event no signature answers for is
// unattributed: the operator's, logged, counted and reconciled.
import { and, eq, gte, inArray, isNull, lte, ne, or, sql } from "drizzle-orm";
import type { PaidOp } from "@/lib/chain/paid-ops";
import { rowsOf, type Queryable, type Tx } from "@/lib/db/client";
import { chainCursors, chainLandings, paymasterSignatures, sponsoredOperations, sponsorshipEntries, sponsorshipHolds, transactionIntents } from "@/lib/db/schema";
import { newId } from "@/lib/ids";
import { log } from "@/lib/log";
import { chunksOf } from "@/lib/chunks";
import { holdEntry, type HoldRow } from "./ledger";

export type LandingRow = typeof chainLandings.$inferSelect;
type EntryInsert = typeof sponsorshipEntries.$inferInsert;

/** The chain follower's cursor in chain_cursors: the next block it reads, and the hash of the one before as read. */
export const FOLLOWER_CURSOR = "follower";

/**
 * The events the relayer read from its receipts that it may record: those in blocks the chain follower has not read
 * yet. The follower recorded the others itself when they were the chain's; one from a block that has since left the
 * chain, recorded behind the follower, would never be checked again. Called first in the relayer's transaction: the
 * share lock on the cursor orders it against the follower's (which moves the cursor, then checks what was recorded).
 */
export async function aheadOfFollower(tx: Queryable, chainId: number, events: PaidOp[]): Promise<PaidOp[]> {
  const [cursor] = await tx
    .select({ next: chainCursors.nextBlock })
    .from(chainCursors)
    .where(and(eq(chainCursors.name, FOLLOWER_CURSOR), eq(chainCursors.chainId, chainId)))
    .for("share");
  return cursor ? events.filter((e) => e.blockNumber >= cursor.next) : events;
}

/**
 * The follower has just read blocks from..to (`ops`, and the hashes it knows of those blocks): landings recorded there
 * in a block the chain no longer has are removed. One in a block whose hash the follower does not know (recorded by
 * the relayer since the follower last looked) answers "unchecked": the caller rolls back and reads the range again.
 */
export async function removeOffRange(
  tx: Queryable,
  chainId: number,
  range: { from: bigint; to: bigint },
  hashOf: (n: number) => string | undefined,
): Promise<LandingRow[] | "unchecked"> {
  const rows = await tx
    .select()
    .from(chainLandings)
    .where(and(eq(chainLandings.chainId, chainId), ne(chainLandings.status, "removed"), gte(chainLandings.blockNumber, Number(range.from)), lte(chainLandings.blockNumber, Number(range.to))));
  const gone: string[] = [];
  for (const row of rows) {
    const hash = hashOf(row.blockNumber);
    if (hash === undefined) return "unchecked";
    if (hash !== row.blockHash.toLowerCase()) gone.push(row.id);
  }
  return removeLandings(tx, gone);
}


/** The landings of these events (recorded now, or before: the relayer and the chain follower both see them). */
async function recordEvents(tx: Queryable, events: PaidOp[]): Promise<LandingRow[]> {
  if (events.length === 0) return [];
  const chainId = events[0]!.chainId;
  await tx
    .insert(chainLandings)
    .values(
      events.map((e) => ({
        id: newId("chainLanding"),
        chainId: e.chainId,
        entryPoint: e.entryPoint.toLowerCase(),
        paymaster: e.paymaster.toLowerCase(),
        userOperationHash: e.userOpHash.toLowerCase(),
        sender: e.sender.toLowerCase(),
        nonce: e.nonce.toString(),
        success: e.success,
        actualGasCost: e.actualGasCost.toString(),
        actualGasUsed: e.actualGasUsed.toString(),
        transactionHash: e.transactionHash.toLowerCase(),
        blockNumber: Number(e.blockNumber),
        blockHash: e.blockHash.toLowerCase(),
        logIndex: e.logIndex,
      })),
    )
    .onConflictDoNothing({ target: [chainLandings.chainId, chainLandings.blockHash, chainLandings.logIndex], where: sql`status <> 'removed'` });
  const pairs = sql.join(
    events.map((e) => sql`(${e.blockHash.toLowerCase()}, ${e.logIndex}::int)`),
    sql`, `,
  );
  return tx
    .select()
    .from(chainLandings)
    .where(and(eq(chainLandings.chainId, chainId), ne(chainLandings.status, "removed"), sql`(${chainLandings.blockHash}, ${chainLandings.logIndex}) in (${pairs})`));
}

interface Match {
  holdId: string;
  projectId: string;
  livemode: boolean;
  signatureId: string | null;
  intentId: string | null;
}

/**
 * The hold each landing is attributed to. By the signature records: the exact userOpHash (our paymaster's signature
 * covers every field the hash does), else the sender and nonce when all the signatures of that nonce are one hold's.
 * Holds from before signature records answer too: an intent's by its op's hash, an ERC-7677 operation's by its last
 * hash or its sender and nonce.
 */
async function matchLandings(tx: Queryable, landings: LandingRow[]): Promise<Map<string, Match>> {
  const matches = new Map<string, Match>();
  if (landings.length === 0) return matches;
  const chainId = landings[0]!.chainId;
  const hashes = [...new Set(landings.map((l) => l.userOperationHash))];
  const senders = [...new Set(landings.map((l) => l.sender))];
  const signatures = await tx
    .select()
    .from(paymasterSignatures)
    .where(and(eq(paymasterSignatures.chainId, chainId), or(inArray(paymasterSignatures.userOperationHash, hashes), inArray(paymasterSignatures.sender, senders))))
    .orderBy(paymasterSignatures.createdAt, paymasterSignatures.id);
  const of = (s: (typeof signatures)[number]): Match => ({ holdId: s.holdId, projectId: s.projectId, livemode: s.livemode, signatureId: s.id, intentId: s.intentId });
  const left: LandingRow[] = [];
  for (const landing of landings) {
    const exact = signatures.filter((s) => s.userOperationHash === landing.userOperationHash && s.entryPoint === landing.entryPoint);
    if (exact.length > 0) {
      // The same op signed for two holds (two projects sponsoring one outside sender, the same second): the first.
      if (new Set(exact.map((s) => s.holdId)).size > 1) log.warn({ chainId, userOpHash: landing.userOperationHash, holds: exact.map((s) => s.holdId) }, "landing: one op signed under several holds; the first is charged");
      matches.set(landing.id, of(exact[0]!));
      continue;
    }
    const sameNonce = signatures.filter((s) => s.sender === landing.sender && s.nonce === landing.nonce && s.entryPoint === landing.entryPoint);
    const holds = new Set(sameNonce.map((s) => s.holdId));
    if (holds.size === 1) matches.set(landing.id, { ...of(sameNonce[0]!), signatureId: null });
    else {
      if (holds.size > 1) log.warn({ chainId, userOpHash: landing.userOperationHash, holds: [...holds] }, "landing: its sender and nonce are several holds' and its hash none's: not attributed");
      left.push(landing);
    }
  }
  if (left.length === 0) return matches;
  // Holds recorded before signatures were (migration 0039).
  const legacyIntents = await tx
    .select({ holdId: sponsorshipHolds.id, projectId: sponsorshipHolds.projectId, livemode: sponsorshipHolds.livemode, intentId: transactionIntents.id, hash: transactionIntents.userOperationHash })
    .from(transactionIntents)
    .innerJoin(sponsorshipHolds, eq(sponsorshipHolds.intentId, transactionIntents.id))
    .where(and(eq(transactionIntents.chainId, chainId), inArray(transactionIntents.userOperationHash, left.map((l) => l.userOperationHash))));
  const legacyOperations = await tx
    .select({ holdId: sponsorshipHolds.id, projectId: sponsorshipHolds.projectId, livemode: sponsorshipHolds.livemode, hash: sponsoredOperations.userOperationHash, sender: sponsoredOperations.sender, nonce: sponsoredOperations.nonce, status: sponsorshipHolds.status })
    .from(sponsoredOperations)
    .innerJoin(sponsorshipHolds, eq(sponsorshipHolds.sponsoredOperationId, sponsoredOperations.id))
    .where(and(eq(sponsoredOperations.chainId, chainId), or(inArray(sql`lower(${sponsoredOperations.userOperationHash})`, left.map((l) => l.userOperationHash)), inArray(sponsoredOperations.sender, left.map((l) => l.sender)))));
  for (const landing of left) {
    const intent = legacyIntents.find((i) => i.hash.toLowerCase() === landing.userOperationHash);
    if (intent) {
      matches.set(landing.id, { holdId: intent.holdId, projectId: intent.projectId, livemode: intent.livemode, signatureId: null, intentId: intent.intentId });
      continue;
    }
    const operations = legacyOperations.filter((o) => o.hash.toLowerCase() === landing.userOperationHash || (o.sender === landing.sender && o.nonce === landing.nonce));
    const holds = new Set(operations.map((o) => o.holdId));
    // One ERC-7677 operation per project, sender and nonce: its live hold if it has one, else its latest.
    const projects = new Set(operations.map((o) => o.projectId));
    if (projects.size === 1) {
      const chosen = operations.find((o) => o.status === "held") ?? operations.at(-1)!;
      matches.set(landing.id, { holdId: chosen.holdId, projectId: chosen.projectId, livemode: chosen.livemode, signatureId: null, intentId: null });
    } else if (holds.size > 1) log.warn({ chainId, userOpHash: landing.userOperationHash }, "landing: several projects' ERC-7677 operations match it: not attributed");
  }
  return matches;
}

/** The project's intent each attributed landing is: its signature's, else the project's intent of that op (the bundler RPC's). */
async function intentsOfLandings(tx: Queryable, landings: LandingRow[], matches: Map<string, Match>): Promise<void> {
  const missing = landings.filter((l) => matches.get(l.id) && !matches.get(l.id)!.intentId);
  if (missing.length === 0) return;
  const rows = await tx
    .select({ id: transactionIntents.id, projectId: transactionIntents.projectId, livemode: transactionIntents.livemode, hash: transactionIntents.userOperationHash })
    .from(transactionIntents)
    .where(and(eq(transactionIntents.chainId, landings[0]!.chainId), inArray(transactionIntents.userOperationHash, missing.map((l) => l.userOperationHash))));
  for (const landing of missing) {
    const m = matches.get(landing.id)!;
    const intent = rows.find((r) => r.hash.toLowerCase() === landing.userOperationHash && r.projectId === m.projectId && r.livemode === m.livemode);
    if (intent) m.intentId = intent.id;
  }
}

export interface Observed {
  /** Every landing of the events given (attributed or not), as recorded. */
  landings: LandingRow[];
  /** Landings settled by this call. */
  settled: number;
}

/**
 * Records the events our paymasters paid, attributes each new one, and settles those in blocks up to `settleThrough`
 * (the confirmation depth: null settles none). Idempotent: an event seen before is not recorded, attributed or settled
 * again. Run it in a transaction (the relayer's landing's, or the follower's).
 */
export async function observe(tx: Tx, events: PaidOp[], settleThrough: bigint | null): Promise<Observed> {
  const observed: Observed = { landings: [], settled: 0 };
  for (const part of chunks(events)) {
    const { landings, settled } = await observeSome(tx, part, settleThrough);
    observed.landings.push(...landings);
    observed.settled += settled;
  }
  return observed;
}

/**
 * At most this many landings per statement: a first pass over a busy chain's history reads thousands of events at
 * once, and PGlite stalls on a row-valued IN list of a few hundred rows (PostgreSQL does not).
 */
const STATEMENT_ROWS = 200;
const chunks = <T>(rows: T[]): T[][] => chunksOf(rows, STATEMENT_ROWS);

async function observeSome(tx: Tx, events: PaidOp[], settleThrough: bigint | null): Promise<Observed> {
  if (events.length === 0) return { landings: [], settled: 0 };
  const recorded = await recordEvents(tx, events);
  const fresh = recorded.filter((l) => l.holdId === null && l.projectId === null && l.status !== "removed");
  const matches = await matchLandings(tx, fresh);
  await intentsOfLandings(tx, fresh, matches);
  if (matches.size > 0) {
    await tx.execute(sql`
      update ${chainLandings} set hold_id = v.hold_id, project_id = v.project_id, livemode = v.livemode::boolean, signature_id = v.signature_id, intent_id = v.intent_id, updated_at = now()
      from (values ${sql.join(
        [...matches].map(([id, m]) => sql`(${id}, ${m.holdId}, ${m.projectId}, ${m.livemode}, ${m.signatureId}::text, ${m.intentId}::text)`),
        sql`, `,
      )}) as v(id, hold_id, project_id, livemode, signature_id, intent_id)
      where ${chainLandings.id} = v.id`);
    for (const landing of recorded) {
      const m = matches.get(landing.id);
      if (m) Object.assign(landing, { holdId: m.holdId, projectId: m.projectId, livemode: m.livemode, signatureId: m.signatureId, intentId: m.intentId });
    }
    await markSignatures(tx, recorded.filter((l) => matches.has(l.id)));
  }
  for (const landing of fresh) {
    if (!matches.has(landing.id)) {
      log.warn(
        { chainId: landing.chainId, userOpHash: landing.userOperationHash, sender: landing.sender, nonce: landing.nonce, transactionHash: landing.transactionHash, actualGasCost: landing.actualGasCost },
        "sponsorship: our paymaster paid an operation no signature of ours answers for (unattributed: the operator's)",
      );
    }
  }
  const due = settleThrough === null ? [] : recorded.filter((l) => l.status === "seen" && BigInt(l.blockNumber) <= settleThrough);
  const settled = await settleLandings(tx, due);
  return { landings: recorded, settled };
}

/** The signatures of the landings' chain, EntryPoints, senders and nonces: only one op of each can land. */
const sameSlots = (landings: LandingRow[]) =>
  and(
    eq(paymasterSignatures.chainId, landings[0]!.chainId),
    sql`(${paymasterSignatures.entryPoint}, ${paymasterSignatures.sender}, ${paymasterSignatures.nonce}) in (${sql.join(
      landings.map((l) => sql`(${l.entryPoint}, ${l.sender}, ${l.nonce}::numeric)`),
      sql`, `,
    )})`,
  );

/** A landed op's signature is landed; every other live signature of its sender and nonce can no longer land. */
async function markSignatures(tx: Queryable, landings: LandingRow[]): Promise<void> {
  const signed = landings.flatMap((l) => (l.signatureId ? [l.signatureId] : []));
  if (signed.length) await tx.update(paymasterSignatures).set({ status: "landed", updatedAt: sql`now()` }).where(inArray(paymasterSignatures.id, signed));
  await tx
    .update(paymasterSignatures)
    .set({ status: "dead", updatedAt: sql`now()` })
    .where(and(eq(paymasterSignatures.status, "live"), sameSlots(landings)));
}

interface BalanceDelta {
  projectId: string;
  livemode: boolean;
  chainId: number;
  held: bigint;
  settled: bigint;
}

function addDelta(deltas: Map<string, BalanceDelta>, h: Pick<HoldRow, "projectId" | "livemode" | "chainId">, held: bigint, settled: bigint) {
  const key = `${h.projectId}:${h.livemode}:${h.chainId}`;
  const d = deltas.get(key) ?? { projectId: h.projectId, livemode: h.livemode, chainId: h.chainId, held: 0n, settled: 0n };
  d.held += held;
  d.settled += settled;
  deltas.set(key, d);
}

async function applyDeltas(tx: Queryable, deltas: Map<string, BalanceDelta>) {
  const rows = [...deltas.values()].filter((d) => d.held !== 0n || d.settled !== 0n);
  if (rows.length === 0) return;
  await tx.execute(sql`
    update sponsorship_balances b set held = b.held + v.held::numeric, settled = b.settled + v.settled::numeric, updated_at = now()
    from (values ${sql.join(
      rows.map((d) => sql`(${d.projectId}, ${d.livemode}::boolean, ${d.chainId}::int, ${d.held.toString()}, ${d.settled.toString()})`),
      sql`, `,
    )}) as v(project_id, livemode, chain_id, held, settled)
    where b.project_id = v.project_id and b.livemode = v.livemode and b.chain_id = v.chain_id`);
}

async function lockHolds(tx: Queryable, ids: string[]): Promise<Map<string, HoldRow>> {
  if (ids.length === 0) return new Map();
  const rows = await tx.select().from(sponsorshipHolds).where(inArray(sponsorshipHolds.id, [...new Set(ids)])).orderBy(sponsorshipHolds.id).for("update");
  return new Map(rows.map((h) => [h.id, h]));
}

/** Writes holds' new state (status, amount, settledAmount) in one statement. */
async function writeHolds(tx: Queryable, holds: HoldRow[]) {
  if (holds.length === 0) return;
  await tx.execute(sql`
    update ${sponsorshipHolds} set status = v.status, amount = v.amount::numeric, settled_amount = v.settled::numeric, updated_at = now()
    from (values ${sql.join(
      holds.map((h) => sql`(${h.id}, ${h.status}, ${h.amount}, ${h.settledAmount}::text)`),
      sql`, `,
    )}) as v(id, status, amount, settled)
    where ${sponsorshipHolds.id} = v.id`);
}

/**
 * Settles landings (seen, in blocks at the confirmation depth) once each, a few statements per STATEMENT_ROWS. An
 * attributed one: its hold, live, settles at the actual cost (the rest released); a hold no longer live (settled by
 * another landing, or released after its signatures expired) is held for the cost and settled. An unattributed one is
 * the operator's: counted. Landings already settled or removed are skipped.
 */
export async function settleLandings(tx: Queryable, landings: LandingRow[]): Promise<number> {
  let settled = 0;
  for (const part of chunks(landings)) settled += await settleSome(tx, part);
  return settled;
}

async function settleSome(tx: Queryable, landings: LandingRow[]): Promise<number> {
  const due = landings.filter((l) => l.status === "seen");
  if (due.length === 0) return 0;
  const claimed = rowsOf<{ id: string }>(
    await tx.execute(sql`update ${chainLandings} set status = 'settled', updated_at = now() where ${inArray(chainLandings.id, due.map((l) => l.id))} and status = 'seen' returning id`),
  );
  const mine = new Set(claimed.map((r) => r.id));
  const settling = due.filter((l) => mine.has(l.id));
  const holds = await lockHolds(
    tx,
    settling.flatMap((l) => (l.holdId ? [l.holdId] : [])),
  );
  const entries: EntryInsert[] = [];
  const deltas = new Map<string, BalanceDelta>();
  const touched = new Map<string, HoldRow>();
  for (const landing of settling) {
    landing.status = "settled";
    const cost = BigInt(landing.actualGasCost);
    const h = landing.holdId ? holds.get(landing.holdId) : undefined;
    // Unattributed: the operator's (reconciliation and /metrics count it from the landings).
    if (!h) continue;
    const at = { landingId: landing.id, blockNumber: landing.blockNumber, blockHash: landing.blockHash };
    if (h.status === "held") {
      const amount = BigInt(h.amount);
      const extra = cost > amount ? cost - amount : 0n;
      if (extra > 0n) entries.push(holdEntry(h, "hold", extra));
      entries.push({ ...holdEntry(h, "settle", cost), ...at });
      if (amount + extra > cost) entries.push(holdEntry(h, "release", amount + extra - cost));
      addDelta(deltas, h, -amount, cost);
      Object.assign(h, { status: "settled", amount: (amount + extra).toString(), settledAmount: cost.toString() });
    } else {
      entries.push(holdEntry(h, "hold", cost), { ...holdEntry(h, "settle", cost), ...at });
      addDelta(deltas, h, 0n, cost);
      Object.assign(h, { status: "settled", settledAmount: (BigInt(h.settledAmount ?? "0") + cost).toString() });
    }
    touched.set(h.id, h);
  }
  await writeHolds(tx, [...touched.values()]);
  await applyDeltas(tx, deltas);
  if (entries.length) await tx.insert(sponsorshipEntries).values(entries);
  return settling.length;
}

/**
 * Landings whose block left the chain: removed; a settled one's settle entry reversed (a reversal entry, the settle
 * left as it was) and its hold held again at the most of its signatures that may land again (the follower's sweep
 * releases it when they cannot). Their signatures are live again, as are those its landing had made dead.
 */
export async function removeLandings(tx: Queryable, landingIds: string[]): Promise<LandingRow[]> {
  const removed: LandingRow[] = [];
  for (const part of chunks(landingIds)) removed.push(...(await removeSome(tx, part)));
  return removed;
}

async function removeSome(tx: Queryable, landingIds: string[]): Promise<LandingRow[]> {
  if (landingIds.length === 0) return [];
  const removed = await tx
    .update(chainLandings)
    .set({ status: "removed", updatedAt: sql`now()` })
    .where(and(inArray(chainLandings.id, landingIds), ne(chainLandings.status, "removed")))
    .returning();
  if (removed.length === 0) return [];
  const old = new Map(
    (
      await tx
        .select({ id: sponsorshipEntries.id, landingId: sponsorshipEntries.landingId })
        .from(sponsorshipEntries)
        .where(and(inArray(sponsorshipEntries.landingId, removed.map((l) => l.id)), eq(sponsorshipEntries.kind, "settle")))
    ).map((e) => [e.landingId!, e.id]),
  );
  // Signatures back to live: the landing's, and those of its sender and nonce that its landing made dead.
  await tx
    .update(paymasterSignatures)
    .set({ status: "live", updatedAt: sql`now()` })
    .where(and(ne(paymasterSignatures.status, "live"), sameSlots(removed)));
  const holds = await lockHolds(
    tx,
    removed.flatMap((l) => (l.holdId && old.has(l.id) ? [l.holdId] : [])),
  );
  const liveMost = new Map(
    holds.size === 0
      ? []
      : (
          await tx
            .select({ holdId: paymasterSignatures.holdId, most: sql<string>`max(${paymasterSignatures.maxCost})::text` })
            .from(paymasterSignatures)
            .where(and(inArray(paymasterSignatures.holdId, [...holds.keys()]), eq(paymasterSignatures.status, "live")))
            .groupBy(paymasterSignatures.holdId)
        ).map((r) => [r.holdId, BigInt(r.most)]),
  );
  const entries: EntryInsert[] = [];
  const deltas = new Map<string, BalanceDelta>();
  const touched = new Map<string, HoldRow>();
  for (const landing of removed) {
    const settleEntry = old.get(landing.id);
    const h = landing.holdId ? holds.get(landing.holdId) : undefined;
    if (!settleEntry || !h) continue;
    const cost = BigInt(landing.actualGasCost);
    entries.push({ ...holdEntry(h, "reversal", cost), reverses: settleEntry, landingId: landing.id, blockNumber: landing.blockNumber, blockHash: landing.blockHash });
    const left = BigInt(h.settledAmount ?? "0") - cost;
    if (left > 0n) {
      addDelta(deltas, h, 0n, -cost);
      h.settledAmount = left.toString();
    } else {
      // Held again, for the most its signatures may cost should the op land in another block.
      const amount = liveMost.get(h.id) ?? BigInt(h.amount);
      entries.push(holdEntry(h, "hold", amount));
      addDelta(deltas, h, amount, -cost);
      Object.assign(h, { status: "held", amount: amount.toString(), settledAmount: null });
    }
    touched.set(h.id, h);
  }
  await writeHolds(tx, [...touched.values()]);
  await applyDeltas(tx, deltas);
  if (entries.length) await tx.insert(sponsorshipEntries).values(entries);
  for (const landing of removed) {
    log.warn({ chainId: landing.chainId, userOpHash: landing.userOperationHash, blockNumber: landing.blockNumber, blockHash: landing.blockHash, settled: old.has(landing.id) }, "sponsorship: a landing's block left the chain (reorg)");
  }
  return removed;
}

/** The attributed, not removed landings of an intent (its op, or an earlier signing of it, on chain). */
export const landingsOfIntent = (q: Queryable, intentId: string) =>
  q.select().from(chainLandings).where(and(eq(chainLandings.intentId, intentId), ne(chainLandings.status, "removed")));

/** Landings recorded without a project (the operator's), not removed. */
export const unattributed = (q: Queryable, chainId: number) =>
  q.select().from(chainLandings).where(and(eq(chainLandings.chainId, chainId), isNull(chainLandings.projectId), ne(chainLandings.status, "removed")));
