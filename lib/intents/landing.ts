// Recording landed ops: the intent's response (the op's receipt, its own logs), its hold settled at the actual cost
// and its account marked deployed (or delegated). Many at once: a bundle's landings in one transaction of a fixed
// number of statements, whatever its size.
import { and, eq, inArray, sql } from "drizzle-orm";
import { getAddress, parseEventLogs, type Block, type Hex, type Log, type TransactionReceipt } from "viem";
import { entryPointAbi } from "@/contracts/artifacts";
import { publicClient } from "@/lib/chain/clients";
import { blockAt } from "@/lib/chain/coalesce";
import { serviceDeployment } from "@/lib/chain/contracts";
import { findChain } from "@/lib/chain/registry";
import type { RelayedUserOperationReceipt } from "@/lib/chain/relayer";
import type { Db } from "@/lib/db/client";
import { accounts, transactionIntents } from "@/lib/db/schema";
import { metrics } from "@/lib/metrics";
import { paidOpsOf, type PaidOp } from "@/lib/chain/paid-ops";
import { aheadOfFollower, observe } from "@/lib/sponsorship/attribution";
import { followSettings } from "@/lib/sponsorship/depth";
import type { IntentRow } from "./service";
import { loadOp } from "@/lib/intent-records/versioned-op";

export const chainOf = (intent: IntentRow) => {
  const chain = findChain(intent.chainId);
  if (!chain) throw new Error(`chain ${intent.chainId} of ${intent.id} is no longer configured`);
  return chain;
};

const boundaryEvents = new Set(["UserOperationEvent", "BeforeExecution"]);

type EntryPointEvents = Map<number, ReturnType<typeof parseEventLogs<typeof entryPointAbi>>[number]>;

/** The EntryPoints' events among a bundle's logs, by log index: parsed once per bundle, whatever its size. */
function entryPointEvents(logs: Log<bigint, number, false>[]): EntryPointEvents {
  // Either EntryPoint: v0.8 emits the same UserOperationEvent and BeforeExecution.
  const { entryPoint, entryPointV08 } = serviceDeployment();
  const ours = [entryPoint.toLowerCase(), entryPointV08.toLowerCase()];
  const parsed = parseEventLogs({ abi: entryPointAbi, logs: logs.filter((log) => ours.includes(log.address.toLowerCase())) });
  return new Map(parsed.map((p) => [p.logIndex, p]));
}

/**
 * The logs the op's own execution emitted: in a v0.6 bundle, those after BeforeExecution (or the
 * previous op's UserOperationEvent) and before the op's UserOperationEvent.
 */
function opLogs(logs: Log<bigint, number, false>[], names: EntryPointEvents, userOpHash: Hex) {
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

export interface Landing {
  intent: IntentRow;
  receipt: RelayedUserOperationReceipt;
  /** The bundle's receipt when the relayer holds it (else fetched once per transaction). */
  bundle?: TransactionReceipt;
}

/** The intent's response: what the op's receipt, its bundle and its block say. */
function responseOf(receipt: RelayedUserOperationReceipt, transaction: TransactionReceipt, names: EntryPointEvents, block: Block) {
  return {
    createdAt: Number(block.timestamp),
    blockNumber: Number(receipt.blockNumber),
    transactionHash: receipt.transactionHash,
    to: getAddress(transaction.to ?? serviceDeployment().entryPoint),
    gasUsed: receipt.actualGasUsed.toString(),
    gasFee: receipt.actualGasCost.toString(),
    status: receipt.success ? 1 : 0,
    logs: opLogs(transaction.logs, names, receipt.userOpHash).map((log) => ({
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
}

/**
 * Records landed ops as their intents' responses, with the block that holds them (confirmation checks that hash). The
 * landings and what our paymasters paid in their bundles go to the ledger's one attribution point in the same
 * transaction (a retry finds both done, or neither): on a chain whose confirmation depth is one block it settles them
 * at once, elsewhere the chain follower does at that depth. An intent already landed in another block is left as it
 * is (a reorg sends it back first). The accounts are marked deployed after, in one statement (ops carrying an
 * EIP-7702 authorization: their EOA's delegation, one each).
 */
export async function recordLandings(db: Db, landings: Landing[]): Promise<void> {
  if (landings.length === 0) return;
  // Each bundle's receipt and each block once, however many of its ops land here.
  const transactions = new Map<string, Promise<{ transaction: TransactionReceipt; names: EntryPointEvents }>>();
  const responses = await Promise.all(
    landings.map(async (landing) => {
      const chain = chainOf(landing.intent);
      const key = `${chain.chainId}:${landing.receipt.transactionHash}`;
      if (!transactions.has(key)) {
        const fetched = landing.bundle ? Promise.resolve(landing.bundle) : publicClient(chain).getTransactionReceipt({ hash: landing.receipt.transactionHash });
        transactions.set(key, fetched.then((transaction) => ({ transaction, names: entryPointEvents(transaction.logs) })));
      }
      const [{ transaction, names }, block] = await Promise.all([transactions.get(key)!, blockAt(chain, landing.receipt.blockNumber)]);
      return { response: responseOf(landing.receipt, transaction, names, block), blockHash: transaction.blockHash };
    }),
  );
  // What our paymasters paid in these bundles, per chain (the intents' ops and any other in them).
  const paid = new Map<number, PaidOp[]>();
  for (const [key, fetched] of transactions) {
    const chainId = Number(key.split(":")[0]);
    const chain = findChain(chainId)!;
    paid.set(chainId, [...(paid.get(chainId) ?? []), ...paidOpsOf(chain, (await fetched).transaction.logs)]);
  }
  const values = landings.map(({ intent, receipt }, i) => {
    const { response, blockHash } = responses[i]!;
    return sql`(${intent.id}, ${receipt.success ? "successful" : "failed"}, ${receipt.userOpHash.toLowerCase()}, ${receipt.transactionHash}, ${Number(receipt.blockNumber)}::int, ${blockHash.toLowerCase()}, ${receipt.actualGasUsed.toString()}, ${receipt.actualGasCost.toString()}, ${JSON.stringify(response)}::jsonb, ${response.error ?? null}::text)`;
  });
  await db.transaction(async (tx) => {
    // First, before any row lock of this transaction: the follower's cursor (see aheadOfFollower).
    const ahead = new Map<number, PaidOp[]>();
    for (const [chainId, events] of [...paid].sort(([a], [b]) => a - b)) ahead.set(chainId, await aheadOfFollower(tx, chainId, events));
    await tx.execute(sql`
      update ${transactionIntents} set status = v.status, user_operation_hash = v.user_operation_hash, transaction_hash = v.transaction_hash, block_number = v.block_number,
        block_hash = v.block_hash, gas_used = v.gas_used, gas_cost = v.gas_cost, response = v.response, error = v.error, updated_at = now()
      from (values ${sql.join(values, sql`, `)}) as v(id, status, user_operation_hash, transaction_hash, block_number, block_hash, gas_used, gas_cost, response, error)
      where ${transactionIntents.id} = v.id and (${transactionIntents.blockHash} is null or ${transactionIntents.blockHash} = v.block_hash)`);
    for (const [chainId, events] of ahead) {
      const chain = findChain(chainId)!;
      // At a depth of one block, a receipt just read is confirmed; deeper, the chain follower settles later.
      const through = followSettings(chain).confirmations === 1 ? events.reduce((max, e) => (e.blockNumber > max ? e.blockNumber : max), 0n) : null;
      await observe(tx, events, through);
    }
  });
  for (const { intent, receipt } of landings) {
    metrics.intents.inc({ outcome: receipt.success ? "landed" : "reverted" });
    if (receipt.success) metrics.landSeconds.observe((Date.now() - intent.createdAt.getTime()) / 1000);
  }
  await markDeployed(db, landings.map((l) => l.intent));
}

/**
 * What the intents' landed ops did to their accounts: any landed op (even one whose calls reverted) has deployed its
 * account; one carrying an EIP-7702 authorization has delegated its EOA there (the bundle applied it before the op ran).
 */
async function markDeployed(db: Db, intents: IntentRow[]): Promise<void> {
  const deployed = new Set<string>();
  for (const intent of intents) {
    const landed = loadOp(intent.userOperation);
    const delegatedTo = landed.version === "0.8" && landed.op.authorization ? getAddress(landed.op.authorization.address) : null;
    if (delegatedTo) await db.update(accounts).set({ deployed: true, delegatedTo, updatedAt: sql`now()` }).where(eq(accounts.id, intent.accountId));
    else deployed.add(intent.accountId);
  }
  if (deployed.size) {
    await db
      .update(accounts)
      .set({ deployed: true, updatedAt: sql`now()` })
      .where(and(inArray(accounts.id, [...deployed]), eq(accounts.deployed, false)));
  }
}

/** Records one landed op (see recordLandings). */
export const recordLanding = (db: Db, intent: IntentRow, receipt: RelayedUserOperationReceipt, bundle?: TransactionReceipt) =>
  recordLandings(db, [{ intent, receipt, bundle }]);

/**
 * How many of its confirmation blocks a landed intent still lacks on top of `head`, and how long they should take:
 * the chain's pace since the op landed (at least 1 s, at most 30 s), so a check rarely comes too early.
 */
export function confirmationsLeft(intent: IntentRow, head: Pick<Block, "number" | "timestamp">): { remaining: number; waitSeconds: number } {
  const remaining = intent.blockNumber! + intent.confirmationBlocks - Number(head.number);
  if (remaining <= 0) return { remaining: 0, waitSeconds: 0 };
  const landedAt = (intent.response as { createdAt?: number } | null)?.createdAt;
  const elapsedBlocks = Number(head.number) - intent.blockNumber!;
  const perBlock = landedAt !== undefined && elapsedBlocks > 0 ? (Number(head.timestamp) - landedAt) / elapsedBlocks : chainOf(intent).dev ? 1 : 2;
  return { remaining, waitSeconds: Math.min(30, Math.max(1, Math.ceil(remaining * perBlock))) };
}
