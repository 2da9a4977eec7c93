import { and, eq, inArray, isNull, lt, lte, or, sql } from "drizzle-orm";
import type { Address } from "viem";
import { publicClient } from "@/lib/chain/clients";
import { message, readChain, type Read } from "@/lib/chain/multicall";
import { findChain, supportedChains } from "@/lib/chain/registry";
import { contracts, developerAccounts, eventDefinitions, type MonitorChainState } from "@/lib/db/schema";
import type { Db } from "@/lib/db/client";
import { fanOut, publish } from "@/lib/deliveries/publish";
import type { Topic } from "@/lib/deliveries/topics";
import { ApiError } from "@/lib/errors";
import { BALANCE_TOPICS } from "@/lib/deliveries/topics";
import { projectBalances } from "@/lib/sponsorship/reads";
import { presentEvent, type EventRow } from "./present";
import { contractCall } from "./service";

// The monitors' test points Multicall3 at a chain that lacks it.
export { MULTICALL3 } from "@/lib/chain/multicall";

/**
 * The chain read a definition makes, or why it cannot be made (a deleted contract, say). balance.project monitors
 * read no chain value: they watch the project's own sponsorship balance (lib/sponsorship), in the database.
 */
async function readFor(db: Db, def: EventRow, contractsById: Map<string, typeof contracts.$inferSelect>, accountsById: Map<string, typeof developerAccounts.$inferSelect>): Promise<Read> {
  const ctx = { projectId: def.projectId, livemode: def.livemode };
  if (def.topic === "balance.dev_account") {
    const account = accountsById.get(def.developerAccountId ?? "");
    if (!account || account.deleted) throw new Error(`developer account ${def.developerAccountId} is deleted`);
    return { kind: "native", address: account.address as Address };
  }
  const contract = contractsById.get(def.contractId ?? "");
  if (!contract || contract.deleted) throw new Error(`contract ${def.contractId} is deleted`);
  const { abi, fn, args } = await contractCall(db, ctx, contract, def.functionName ?? "", def.functionArgs ?? []);
  return { kind: "call", address: contract.address as Address, abi, functionName: fn.name, args };
}

export interface CheckSummary {
  checked: number;
  fired: string[];
  errors: number;
}

/**
 * One check of every live balance monitor (or of `ids` only): each chain read at its latest block,
 * each definition's reading stored, and an event published (then fanned out) for each that has now
 * been below its threshold for numberOfBlocks blocks. `runId` becomes the event's requestId.
 * balance.contract and balance.dev_account read the chain; balance.project reads the project's available
 * sponsorship balance, counting its blocks on the chain's clock, on one chain or, without a chainId, on every
 * chain of its mode (each chain crossing on its own).
 */
export async function checkMonitors(db: Db, options: { runId: string | null; ids?: string[] }): Promise<CheckSummary> {
  const defs = await db
    .select()
    .from(eventDefinitions)
    .where(and(eq(eventDefinitions.deleted, false), inArray(eventDefinitions.topic, [...BALANCE_TOPICS]), options.ids ? inArray(eventDefinitions.id, options.ids) : undefined));
  const summary: CheckSummary = { checked: defs.length, fired: [], errors: 0 };
  if (defs.length === 0) return summary;
  const contractIds = [...new Set(defs.flatMap((d) => (d.contractId ? [d.contractId] : [])))];
  const accountIds = [...new Set(defs.flatMap((d) => (d.developerAccountId ? [d.developerAccountId] : [])))];
  const [contractRows, accountRows] = await Promise.all([
    contractIds.length ? db.select().from(contracts).where(inArray(contracts.id, contractIds)) : [],
    accountIds.length ? db.select().from(developerAccounts).where(inArray(developerAccounts.id, accountIds)) : [],
  ]);
  const contractsById = new Map(contractRows.map((c) => [c.id, c]));
  const accountsById = new Map(accountRows.map((a) => [a.id, a]));

  const projectDefs = defs.filter((d) => d.topic === "balance.project");
  const byChain = new Map<number, { def: EventRow; read: Read }[]>();
  for (const def of defs) {
    if (def.topic === "balance.project") continue;
    try {
      const read = await readFor(db, def, contractsById, accountsById);
      byChain.set(def.chainId!, [...(byChain.get(def.chainId!) ?? []), { def, read }]);
    } catch (err) {
      summary.errors++;
      await recordError(db, def, err instanceof ApiError ? err.message : message(err));
    }
  }
  // The chains the project monitors count blocks on: read for their latest block alone when nothing else reads them.
  const projectChains = new Map(projectDefs.map((def) => [def.id, def.chainId !== null ? [def.chainId] : modeChains(def.livemode)]));
  const chainIds = new Set([...byChain.keys(), ...[...projectChains.values()].flat()]);
  const blocks = new Map<number, { block: number } | { error: string }>();
  await Promise.all(
    [...chainIds].map(async (chainId) => {
      const items = byChain.get(chainId) ?? [];
      const chain = findChain(chainId);
      let outcome: Awaited<ReturnType<typeof readChain>>;
      try {
        if (!chain) throw new Error(`chain ${chainId} is not configured`);
        // cacheTime 0: viem otherwise answers from a block number a few seconds old.
        outcome = items.length ? await readChain(chain, items.map((item) => item.read)) : { block: await publicClient(chain).getBlockNumber({ cacheTime: 0 }), readings: [] };
      } catch (err) {
        blocks.set(chainId, { error: `chain ${chainId}: ${message(err)}` });
        summary.errors += items.length;
        await Promise.all(items.map(({ def }) => recordError(db, def, `chain ${chainId}: ${message(err)}`)));
        return;
      }
      blocks.set(chainId, { block: Number(outcome.block) });
      for (const [i, { def }] of items.entries()) {
        const reading = outcome.readings[i]!;
        if ("error" in reading) {
          summary.errors++;
          await recordError(db, def, reading.error);
        } else if (await record(db, def, reading.value, Number(outcome.block), options.runId)) summary.fired.push(def.id);
      }
    }),
  );
  for (const def of projectDefs) {
    try {
      const fired = def.chainId !== null ? await checkProjectChain(db, def, blocks.get(def.chainId)!, options.runId) : await checkProjectChains(db, def, projectChains.get(def.id)!, blocks, options.runId);
      if (fired === "error") summary.errors++;
      else if (fired) summary.fired.push(def.id);
    } catch (err) {
      summary.errors++;
      await recordError(db, def, message(err));
    }
  }
  return summary;
}

/** The chains of a mode, which a balance.project monitor without a chain watches. */
const modeChains = (livemode: boolean) => supportedChains().flatMap((c) => (c.livemode === livemode ? [c.chainId] : []));

/** A balance.project monitor of one chain: the project's available balance there, stored and judged as any reading. */
async function checkProjectChain(db: Db, def: EventRow, block: { block: number } | { error: string }, runId: string | null): Promise<boolean | "error"> {
  if ("error" in block) {
    await recordError(db, def, block.error);
    return "error";
  }
  const [balance] = await projectBalances(db, { projectId: def.projectId, livemode: def.livemode }, [def.chainId!]);
  return record(db, def, balance!.available, block.block, runId);
}

/**
 * A balance.project monitor of every chain of its mode: each chain's reading kept in chain_states, each crossing
 * below the threshold on a chain firing once (with that chainId), re-armed on that chain when it is back at or above.
 * Decided under the definition's row lock with the balances read in the same transaction, so concurrent checks
 * neither fire twice nor store an older balance over a newer one; the events are recorded in that transaction.
 */
async function checkProjectChains(db: Db, def: EventRow, chainIds: number[], blocks: Map<number, { block: number } | { error: string }>, runId: string | null): Promise<boolean | "error"> {
  const ctx = { projectId: def.projectId, livemode: def.livemode };
  const readable = chainIds.filter((id) => "block" in (blocks.get(id) ?? { error: "" }));
  const errors = chainIds.flatMap((id) => {
    const b = blocks.get(id);
    return b && "error" in b ? [b.error] : [];
  });
  // Made outside the transaction (a project's first look at a chain writes its balance row).
  await projectBalances(db, ctx, readable);
  const messageIds = await db.transaction(async (tx) => {
    const [row] = await tx
      .select()
      .from(eventDefinitions)
      .where(and(eq(eventDefinitions.id, def.id), eq(eventDefinitions.deleted, false)))
      .for("update");
    if (!row) return [];
    const balances = await projectBalances(tx, ctx, readable);
    const threshold = BigInt(row.threshold ?? "0");
    const now = new Date().toISOString();
    const states: Record<string, MonitorChainState> = { ...(row.chainStates ?? {}) };
    const firing: { chainId: number; value: bigint; block: number }[] = [];
    readable.forEach((chainId, i) => {
      const value = balances[i]!.available;
      const block = (blocks.get(chainId) as { block: number }).block;
      const before = states[String(chainId)];
      if (value >= threshold) {
        states[String(chainId)] = { value: value.toString(), block, checkedAt: now, belowSinceBlock: null, firedAt: null };
        return;
      }
      // Below since its first reading below; a chain reset to lower blocks starts counting again.
      const since = before?.belowSinceBlock != null && before.belowSinceBlock <= block ? before.belowSinceBlock : block;
      const firedAt = before?.belowSinceBlock != null && before.belowSinceBlock <= block ? before.firedAt : null;
      const fires = firedAt === null && block - since >= row.numberOfBlocks;
      states[String(chainId)] = { value: value.toString(), block, checkedAt: now, belowSinceBlock: since, firedAt: fires ? now : firedAt };
      if (fires) firing.push({ chainId, value, block });
    });
    const [updated] = await tx
      .update(eventDefinitions)
      .set({ chainStates: states, lastCheckedAt: sql`now()`, lastError: errors.length ? errors.join("; ").slice(0, 500) : null })
      .where(eq(eventDefinitions.id, def.id))
      .returning();
    const ids: string[] = [];
    for (const { chainId, value, block } of firing) {
      ids.push(
        await publish(tx, ctx, {
          topic: "balance.project",
          objectId: updated!.id,
          requestId: runId,
          // The crossing's instant, not its block: a balance in the database may cross twice within one block.
          dedupeKey: `${updated!.id}:${chainId}:${states[String(chainId)]!.firedAt}`,
          data: { object: "event", event: presentEvent(updated!), value: value.toString(), threshold: updated!.threshold, blockNumber: block, chainId },
        }),
      );
    }
    return ids;
  });
  for (const id of messageIds) await fanOut(db, id);
  if (messageIds.length > 0) return true;
  return errors.length > 0 && readable.length === 0 ? "error" : false;
}

async function recordError(db: Db, def: EventRow, error: string) {
  await db.update(eventDefinitions).set({ lastError: error.slice(0, 500), lastCheckedAt: sql`now()` }).where(eq(eventDefinitions.id, def.id));
}

/**
 * Stores a reading and moves the monitor: above the threshold re-arms it; below, it notes the block
 * it went below at, and fires once it has stayed below numberOfBlocks blocks. A reading from an
 * older block than the stored one (a slower concurrent check) changes nothing. Returns whether it fired.
 */
async function record(db: Db, def: EventRow, value: bigint, block: number, runId: string | null): Promise<boolean> {
  const below = value < BigInt(def.threshold ?? "0");
  const [row] = await db
    .update(eventDefinitions)
    .set({
      lastValue: value.toString(),
      lastBlock: block,
      lastCheckedAt: sql`now()`,
      lastError: null,
      ...(below ? { belowSinceBlock: sql`coalesce(${eventDefinitions.belowSinceBlock}, ${block})` } : { belowSinceBlock: null, firedAt: null }),
    })
    .where(
      and(
        eq(eventDefinitions.id, def.id),
        // A stale reading stored a minute ago no longer blocks: the chain may have been reset to lower blocks.
        or(isNull(eventDefinitions.lastBlock), lte(eventDefinitions.lastBlock, block), lt(eventDefinitions.lastCheckedAt, sql`now() - interval '1 minute'`)),
      ),
    )
    .returning();
  if (!row || !below || row.firedAt || block - row.belowSinceBlock! < row.numberOfBlocks) return false;
  // The conditional update decides who fires; the event is recorded in the same transaction, so a
  // crash never leaves a fired monitor without its event (a lost fan-out is redone by fanOutStragglers).
  const messageId = await db.transaction(async (tx) => {
    const [fired] = await tx
      .update(eventDefinitions)
      .set({ firedAt: sql`now()` })
      .where(and(eq(eventDefinitions.id, def.id), isNull(eventDefinitions.firedAt), eq(eventDefinitions.belowSinceBlock, row.belowSinceBlock!), eq(eventDefinitions.deleted, false)))
      .returning();
    if (!fired) return null;
    return publish(tx, { projectId: fired.projectId, livemode: fired.livemode }, {
      topic: fired.topic as Topic,
      objectId: fired.id,
      requestId: runId,
      // A project's balance lives in the database and may cross twice within one block: its crossings are told apart
      // by when they fired (decided in this transaction, so a crossing is never published twice either way).
      dedupeKey: fired.topic === "balance.project" ? `${fired.id}:${fired.belowSinceBlock}:${fired.firedAt!.toISOString()}` : `${fired.id}:${fired.belowSinceBlock}`,
      data: { object: "event", event: presentEvent(fired), value: value.toString(), threshold: fired.threshold, blockNumber: block, chainId: fired.chainId },
    });
  });
  if (!messageId) return false;
  await fanOut(db, messageId);
  return true;
}
