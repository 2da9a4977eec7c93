// Landing a batch of intents (inngest/functions/relay.ts, one run per batch): their ops into one bundle per
// chain and EntryPoint, their landings recorded together, their confirmations awaited together. Whatever does not
// land on this straight path (an op rejected, a chain's node failing) goes on alone: landIntent (land-intent.ts), which
// holds, rebuilds, retries and gives up as each case needs.
import { and, inArray, isNotNull, isNull, sql } from "drizzle-orm";
import type { Hex } from "viem";
import { nodeClient } from "@/lib/chain/clients";
import { findUserOperationReceipts, type RelayResult } from "@/lib/chain/relayer";
import type { Db } from "@/lib/db/client";
import { transactionIntents } from "@/lib/db/schema";
import { log } from "@/lib/log";
import { metrics } from "@/lib/metrics";
import { chainOf, confirmationsLeft, recordLandings, type Landing } from "./landing";
import { enqueueOp, reorgedAway, settledOutcome } from "./land-intent";
import type { IntentRow } from "./service";
import { loadOp } from "@/lib/intent-records/versioned-op";

/** "alone": to be relayed by the per-intent relay (see the file's comment). */
export type BatchOutcome = "landed" | "rejected" | "not-pending" | "alone";

const seconds = (ms: number) => ms / 1000;

/** The intents among `ids`, as they are now. */
export const intentsOf = async (db: Db, ids: string[]): Promise<IntentRow[]> =>
  ids.length ? db.select().from(transactionIntents).where(inArray(transactionIntents.id, ids)) : [];

/**
 * Lands the pending intents among `ids`: ops already on chain (this step run again after a crash) are found with one
 * log search per chain and recorded; the others are queued for the relayer at once, so they share one bundle per
 * chain and EntryPoint, and recorded together when it is mined. Never sends an op twice: an op is looked for on chain
 * before it is queued, and the relayer shares one outcome between two queuings of an op.
 */
export async function landIntents(db: Db, ids: string[]): Promise<Record<string, BatchOutcome>> {
  const started = Date.now();
  const outcomes: Record<string, BatchOutcome> = Object.fromEntries(ids.map((id) => [id, "not-pending" as BatchOutcome]));
  const rows = await intentsOf(db, ids);
  const byChain = new Map<number, IntentRow[]>();
  for (const row of rows) {
    if (row.status !== "pending" && row.status !== "broadcast") {
      outcomes[row.id] = settledOutcome(row) as BatchOutcome;
      continue;
    }
    metrics.intentStageSeconds.observe({ stage: "queue" }, seconds(started - row.createdAt.getTime()));
    byChain.set(row.chainId, [...(byChain.get(row.chainId) ?? []), row]);
  }
  const landings: Landing[] = [];
  const bundled = new Map<string, number>();
  await Promise.all(
    [...byChain.values()].map(async (group) => {
      try {
        const chain = chainOf(group[0]!);
        const found = await findUserOperationReceipts(
          chain,
          group.map((intent) => intent.userOperationHash as Hex),
        );
        const toSend: IntentRow[] = [];
        for (const intent of group) {
          const receipt = found.get(intent.userOperationHash.toLowerCase() as Hex);
          if (receipt) landings.push({ intent, receipt });
          else toSend.push(intent);
        }
        const results = await Promise.allSettled(
          toSend.map((intent) =>
            enqueueOp(chain, loadOp(intent.userOperation)).then((result: RelayResult) => {
              bundled.set(intent.id, Date.now());
              return result;
            }),
          ),
        );
        results.forEach((result, i) => {
          const intent = toSend[i]!;
          if (result.status === "fulfilled") landings.push({ intent, receipt: result.value.receipt, bundle: result.value.transaction });
          else {
            outcomes[intent.id] = "alone";
            const reason = result.reason instanceof Error ? result.reason.message : String(result.reason);
            log.info({ intentId: intent.id, reason }, "relay: the op did not land in its batch's bundle; relayed alone");
          }
        });
      } catch (err) {
        // The chain's node failed (or the chain is gone): each intent of it goes on alone, with its own retries.
        log.warn({ chainId: group[0]!.chainId, err }, "relay: a batch's chain failed; its intents are relayed alone");
        for (const intent of group) if (!landings.some((l) => l.intent.id === intent.id)) outcomes[intent.id] = "alone";
      }
    }),
  );
  await recordLandings(db, landings);
  const recorded = Date.now();
  for (const { intent } of landings) {
    outcomes[intent.id] = "landed";
    const at = bundled.get(intent.id);
    if (at !== undefined) {
      metrics.intentStageSeconds.observe({ stage: "bundle" }, seconds(at - started));
      metrics.intentStageSeconds.observe({ stage: "land" }, seconds(recorded - at));
    }
  }
  return outcomes;
}

export interface BatchConfirmations {
  /** Intents confirmed by this check (recorded now), to notify. */
  confirmed: string[];
  /** Intents still short of their confirmation blocks. */
  waiting: string[];
  /** Intents whose landing left the chain (a reorg): sent back and relayed again on their own (or awaiting their signature). */
  reorged?: string[];
  /** How long until the soonest of those should have them (1 to 30 s). */
  waitSeconds: number;
}

/**
 * Which of the landed intents among `ids` now have their `confirmationBlocks` blocks on top, still in the block they
 * landed in: recorded in one statement. Those whose block left the chain are sent back (reorgedAway), as are those
 * found sent back already. For the others, how long until the first of them should (the missing blocks at the chain's
 * pace since the landing), so the batch sleeps once for all.
 */
export async function checkBatchConfirmations(db: Db, ids: string[]): Promise<BatchConfirmations> {
  const all = await intentsOf(db, ids);
  const reorged = all.filter((row) => row.blockNumber === null && (row.status === "pending" || row.status === "awaiting_signature")).map((r) => r.id);
  const rows = all.filter((row) => row.blockNumber !== null);
  const chains = new Map(rows.map((row) => [row.chainId, chainOf(row)]));
  // Each chain's head and its blocks from one node (nodeClient): a lagging node's head beside another's block is no reorg.
  const latest = new Map(await Promise.all([...chains.values()].map(async (chain) => [chain.chainId, await nodeClient(chain).getBlock({ blockTag: "latest" })] as const)));
  // Confirmed already: recorded by this check before a crash lost its result (notified again: once, by its dedupe key).
  const confirmed: IntentRow[] = rows.filter((row) => row.confirmedAt !== null);
  const deep: IntentRow[] = [];
  const waiting: string[] = [];
  let waitSeconds = 30;
  for (const row of rows) {
    if (row.confirmedAt !== null) continue;
    const left = confirmationsLeft(row, latest.get(row.chainId)!);
    if (left.remaining <= 0) {
      deep.push(row);
      continue;
    }
    waiting.push(row.id);
    waitSeconds = Math.min(waitSeconds, left.waitSeconds);
  }
  // At their depth: still in the block they landed in?
  for (const [chainId, chain] of chains) reorged.push(...(await reorgedAway(db, chain, deep.filter((r) => r.chainId === chainId))));
  const fresh = deep.filter((r) => !reorged.includes(r.id));
  if (fresh.length) {
    await db
      .update(transactionIntents)
      .set({ confirmedAt: sql`now()` })
      .where(and(inArray(transactionIntents.id, fresh.map((r) => r.id)), isNull(transactionIntents.confirmedAt), isNotNull(transactionIntents.blockNumber)));
    const now = Date.now();
    for (const row of fresh) metrics.intentStageSeconds.observe({ stage: "confirm" }, seconds(now - row.updatedAt.getTime()));
  }
  return { confirmed: [...confirmed, ...fresh].map((r) => r.id), waiting, waitSeconds, ...(reorged.length && { reorged }) };
}
