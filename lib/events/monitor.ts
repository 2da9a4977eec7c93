import { and, eq, inArray, isNull, lt, lte, or, sql } from "drizzle-orm";
import type { Abi, Address } from "viem";
import { entryPointAbi } from "@/contracts/artifacts";
import { serviceDeployment } from "@/lib/chain/contracts";
import { message, readChain, type Read } from "@/lib/chain/multicall";
import { findChain } from "@/lib/chain/registry";
import { contracts, developerAccounts, eventDefinitions } from "@/lib/db/schema";
import type { Db } from "@/lib/db/client";
import { fanOut, publish } from "@/lib/deliveries/publish";
import type { Topic } from "@/lib/deliveries/topics";
import { ApiError } from "@/lib/http/errors";
import { BALANCE_TOPICS } from "@/lib/deliveries/topics";
import { presentEvent, type EventRow } from "./present";
import { contractCall } from "./service";

// The monitors' test points Multicall3 at a chain that lacks it.
export { MULTICALL3 } from "@/lib/chain/multicall";

/** The read a definition makes, or why it cannot be made (a deleted contract, say). */
async function readFor(db: Db, def: EventRow, contractsById: Map<string, typeof contracts.$inferSelect>, accountsById: Map<string, typeof developerAccounts.$inferSelect>): Promise<Read> {
  const ctx = { projectId: def.projectId, livemode: def.livemode };
  if (def.topic === "balance.project") {
    const { entryPoint, paymaster } = serviceDeployment();
    return { kind: "call", address: entryPoint, abi: entryPointAbi as Abi, functionName: "balanceOf", args: [paymaster] };
  }
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

  const byChain = new Map<number, { def: EventRow; read: Read }[]>();
  for (const def of defs) {
    try {
      const read = await readFor(db, def, contractsById, accountsById);
      byChain.set(def.chainId!, [...(byChain.get(def.chainId!) ?? []), { def, read }]);
    } catch (err) {
      summary.errors++;
      await recordError(db, def, err instanceof ApiError ? err.message : message(err));
    }
  }
  await Promise.all(
    [...byChain].map(async ([chainId, items]) => {
      const chain = findChain(chainId);
      let outcome: Awaited<ReturnType<typeof readChain>>;
      try {
        if (!chain) throw new Error(`chain ${chainId} is not configured`);
        outcome = await readChain(chain, items.map((item) => item.read));
      } catch (err) {
        summary.errors += items.length;
        await Promise.all(items.map(({ def }) => recordError(db, def, `chain ${chainId}: ${message(err)}`)));
        return;
      }
      for (const [i, { def }] of items.entries()) {
        const reading = outcome.readings[i]!;
        if ("error" in reading) {
          summary.errors++;
          await recordError(db, def, reading.error);
        } else if (await record(db, def, reading.value, Number(outcome.block), options.runId)) summary.fired.push(def.id);
      }
    }),
  );
  return summary;
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
      dedupeKey: `${fired.id}:${fired.belowSinceBlock}`,
      data: { object: "event", event: presentEvent(fired), value: value.toString(), threshold: fired.threshold, blockNumber: block, chainId: fired.chainId },
    });
  });
  if (!messageId) return false;
  await fanOut(db, messageId);
  return true;
}
