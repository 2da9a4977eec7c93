import { and, desc, eq, or, sql } from "drizzle-orm";
import { getAddress, parseEventLogs, type Hex, type Log } from "viem";
import { entryPointAbi } from "@/contracts/artifacts";
import { publicClient } from "@/lib/chain/clients";
import { serviceDeployment } from "@/lib/chain/contracts";
import { findChain } from "@/lib/chain/registry";
import { enqueue, findUserOperationReceipt, type RelayedUserOperationReceipt } from "@/lib/chain/relayer";
import { UserOperationRejectedError } from "@/lib/chain/userop";
import { getDb, type Db } from "@/lib/db/client";
import { accounts, transactionIntents } from "@/lib/db/schema";
import { deserializeUserOp, type IntentRow } from "./service";

const load = async (db: Db, id: string): Promise<IntentRow | undefined> => (await db.select().from(transactionIntents).where(eq(transactionIntents.id, id)))[0];

const chainOf = (intent: IntentRow) => {
  const chain = findChain(intent.chainId);
  if (!chain) throw new Error(`chain ${intent.chainId} of ${intent.id} is no longer configured`);
  return chain;
};

const boundaryEvents = new Set(["UserOperationEvent", "BeforeExecution"]);

/**
 * The logs the op's own execution emitted: in a v0.6 bundle, those after BeforeExecution (or the
 * previous op's UserOperationEvent) and before the op's UserOperationEvent.
 */
function opLogs(logs: Log<bigint, number, false>[], userOpHash: Hex) {
  const { entryPoint } = serviceDeployment();
  const isEntryPoint = (log: Log<bigint, number, false>) => log.address.toLowerCase() === entryPoint.toLowerCase();
  const parsed = parseEventLogs({ abi: entryPointAbi, logs: logs.filter(isEntryPoint) });
  const names = new Map(parsed.map((p) => [p.logIndex, p]));
  const end = logs.findIndex((log) => {
    const event = names.get(log.logIndex);
    return event?.eventName === "UserOperationEvent" && (event.args as { userOpHash: Hex }).userOpHash === userOpHash;
  });
  let start = end;
  while (start > 0) {
    const event = names.get(logs[start - 1]!.logIndex);
    if (event && boundaryEvents.has(event.eventName)) break;
    start--;
  }
  // The EntryPoint's own bookkeeping goes; its events from the op's calls (e.g. Deposited) stay.
  return logs.slice(start, end).filter((log) => names.get(log.logIndex)?.eventName !== "UserOperationRevertReason");
}

/** Records the landed op as the intent's response. */
async function recordLanding(db: Db, intent: IntentRow, receipt: RelayedUserOperationReceipt) {
  const chain = chainOf(intent);
  const client = publicClient(chain);
  const [transaction, block] = await Promise.all([
    client.getTransactionReceipt({ hash: receipt.transactionHash }),
    client.getBlock({ blockNumber: receipt.blockNumber }),
  ]);
  const response = {
    createdAt: Number(block.timestamp),
    blockNumber: Number(receipt.blockNumber),
    transactionHash: receipt.transactionHash,
    to: getAddress(transaction.to ?? serviceDeployment().entryPoint),
    gasUsed: receipt.actualGasUsed.toString(),
    gasFee: receipt.actualGasCost.toString(),
    status: receipt.success ? 1 : 0,
    logs: opLogs(transaction.logs, receipt.userOpHash).map((log) => ({
      removed: log.removed,
      transactionIndex: log.transactionIndex,
      blockNumber: Number(log.blockNumber),
      transactionHash: log.transactionHash,
      address: getAddress(log.address),
      topics: log.topics,
      data: log.data,
      logIndex: log.logIndex,
      blockHash: log.blockHash,
    })),
    ...(receipt.success ? {} : { error: receipt.revertReason ?? "the call reverted" }),
  };
  await db
    .update(transactionIntents)
    .set({
      status: receipt.success ? "successful" : "failed",
      transactionHash: receipt.transactionHash,
      blockNumber: Number(receipt.blockNumber),
      gasUsed: receipt.actualGasUsed.toString(),
      gasCost: receipt.actualGasCost.toString(),
      response,
      error: receipt.success ? null : (receipt.revertReason ?? "the call reverted"),
      updatedAt: sql`now()`,
    })
    .where(eq(transactionIntents.id, intent.id));
  // Any landed op (even one whose calls reverted) has deployed its account.
  await db.update(accounts).set({ deployed: true, updatedAt: sql`now()` }).where(and(eq(accounts.id, intent.accountId), eq(accounts.deployed, false)));
}

export type LandingOutcome = "landed" | "rejected" | "not-pending";

/**
 * Gets a pending intent's op on chain exactly once: if it already landed (a retry after a crash)
 * its receipt is recorded, otherwise it joins the next bundle. A validation failure (expired
 * sponsorship, bad signature) fails the intent without a response; a node error throws, to retry.
 */
export async function landIntent(db: Db, intentId: string): Promise<LandingOutcome> {
  const intent = await load(db, intentId);
  if (!intent || (intent.status !== "pending" && intent.status !== "broadcast")) return "not-pending";
  const chain = chainOf(intent);
  const hash = intent.userOperationHash as Hex;
  let receipt = await findUserOperationReceipt(chain, hash);
  if (!receipt) {
    try {
      receipt = (await enqueue(chain, deserializeUserOp(intent.userOperation))).receipt;
    } catch (err) {
      if (!(err instanceof UserOperationRejectedError)) throw err;
      await db
        .update(transactionIntents)
        .set({ status: "failed", error: err.message, updatedAt: sql`now()` })
        .where(eq(transactionIntents.id, intent.id));
      return "rejected";
    }
  }
  await recordLanding(db, intent, receipt);
  return "landed";
}

/** Whether the intent's transaction has `confirmationBlocks` blocks on top; records it when so. */
export async function checkConfirmations(db: Db, intentId: string): Promise<boolean> {
  const intent = await load(db, intentId);
  if (!intent || intent.blockNumber === null) return true;
  if (intent.confirmedAt) return true;
  // Not viem's cached block number (kept for its polling interval, 4 s by default): each check
  // follows a 1 s sleep, so a cached answer would see no new block and cost a useless round.
  const latest = await publicClient(chainOf(intent)).getBlockNumber({ cacheTime: 0 });
  if (latest < BigInt(intent.blockNumber + intent.confirmationBlocks)) return false;
  await db.update(transactionIntents).set({ confirmedAt: sql`now()` }).where(eq(transactionIntents.id, intent.id));
  return true;
}

/** Cancels an intent still awaiting its signature (its sponsorship has ended); false when it moved on. */
export async function cancelUnsigned(db: Db, intentId: string): Promise<boolean> {
  const rows = await db
    .update(transactionIntents)
    .set({ status: "cancelled", error: "not signed before its sponsorship ended", updatedAt: sql`now()` })
    .where(and(eq(transactionIntents.id, intentId), eq(transactionIntents.status, "awaiting_signature")))
    .returning({ id: transactionIntents.id });
  return rows.length > 0;
}

/**
 * Intents whose background run may never have been queued (the process died between recording
 * them and sending the event): pending, or sponsored and awaiting a signature, unchanged for a
 * minute. Only the last day's: Inngest forgets event ids after 24 hours, so older ones could run twice.
 */
export async function unsettledIntents(db: Db, limit = 1000) {
  return db
    .select({ id: transactionIntents.id, status: transactionIntents.status })
    .from(transactionIntents)
    .where(
      and(
        or(eq(transactionIntents.status, "pending"), and(eq(transactionIntents.status, "awaiting_signature"), eq(transactionIntents.sponsored, true))),
        sql`${transactionIntents.updatedAt} < now() - interval '1 minute'`,
        sql`${transactionIntents.updatedAt} > now() - interval '1 day'`,
      ),
    )
    .orderBy(desc(transactionIntents.updatedAt))
    .limit(limit);
}

export const intentStatus = async (intentId: string) => (await load(await getDb(), intentId))?.status;
