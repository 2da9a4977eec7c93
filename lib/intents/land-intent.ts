// Landing one intent (landIntent): its op to the relayer (lib/chain/relayer), held, rebuilt, retried or given up as
// each case needs, then its confirmations awaited; also its failure, abandonment and cancellation.
import { and, desc, eq, inArray, or, sql } from "drizzle-orm";
import type { Address, Hex, PublicClient, TransactionReceipt } from "viem";
import { nodeClient, publicClient } from "@/lib/chain/clients";
import type { ChainConfig } from "@/lib/chain/registry";
import { enqueue, findUserOperationReceipt, findUserOperationReceipts, receiptsFromLogs } from "@/lib/chain/relayer";
import { UserOperationRejectedError } from "@/lib/chain/userop";
import type { Db } from "@/lib/db/client";
import { paymasterSignatures, transactionIntents } from "@/lib/db/schema";
import { ApiError } from "@/lib/errors";
import { DEPLOYER_INDEX, liveDeployer, violates } from "./deployer";
import { signingSender, rebuildIntent, type RebuildOptions } from "./rebuild";
import type { IntentSender } from "./sender";
import type { IntentRow } from "./service";
import { chainOf, confirmationsLeft, recordLanding } from "./landing";
import { loadOp, opDeploys, type VersionedOp } from "@/lib/intent-records/versioned-op";
import { metrics } from "@/lib/metrics";
import { chainLandedJob, reorgRelayJob } from "@/lib/jobs/messages";
import { sendJobs } from "@/lib/jobs/port";
import { landingsOfIntent } from "@/lib/sponsorship/attribution";
import { unlandIntents } from "./chain-landing";

const load = async (db: Db, id: string): Promise<IntentRow | undefined> => (await db.select().from(transactionIntents).where(eq(transactionIntents.id, id)))[0];

/**
 * "held": its op runs after its account's deployment, which another intent's op is on its way to do: try again later.
 * "retry": land it again now: its op was rebuilt (and re-signed) to land where the old one could not, or its
 * account was deployed meanwhile.
 */
export type LandingOutcome = "landed" | "rejected" | "not-pending" | "held" | "retry";

/**
 * What the relay finds already done when its step runs again after a crash (the landing or the
 * rejection recorded, the step's own result not yet stored): the same outcome, so the run goes on
 * to the webhooks that follow, which publish once per intent and topic whatever runs ask. Anything
 * else (cancelled, awaiting a signature, gone) is not the relay's.
 */
export function settledOutcome(intent: IntentRow | undefined): LandingOutcome {
  if (intent?.response) return "landed";
  if (intent?.status === "failed") return "rejected";
  return "not-pending";
}

/**
 * Rejections a rebuilt op (fresh gas, fees, sponsorship window and signatures; or initCode dropped) can get past. Not
 * AA25 (its nonce used): a rebuild keeps the nonce, and one with a fresh nonce could land beside the op that used it.
 */
const REBUILDABLE = /^AA(10|22|24|32|33|34|40|41|51)\b/;

/**
 * Gets a pending intent's op on chain exactly once: if it already landed (a retry after a crash)
 * its receipt is recorded, otherwise it joins the next bundle. An op built to run after its account's deployment
 * waits for it (see awaitDeployment). A validation failure (expired sponsorship, bad signature) of a custodial
 * intent's op gets it rebuilt when `rebuild` allows; otherwise it fails the intent without a response. A node error
 * throws, to retry.
 */
export async function landIntent(db: Db, intentId: string, options: { rebuild?: boolean } = {}): Promise<LandingOutcome> {
  const intent = await load(db, intentId);
  if (!intent || (intent.status !== "pending" && intent.status !== "broadcast")) return settledOutcome(intent);
  const chain = chainOf(intent);
  const hash = intent.userOperationHash as Hex;
  const versioned = loadOp(intent.userOperation);
  const op = versioned.op;
  // Without code at its sender, an op without initCode cannot have landed: no need to look for it.
  if (!opDeploys(versioned) && !(await hasCode(chain, op.sender))) {
    const outcome = await awaitDeployment(db, intent, chain);
    // The deployer is on its way: its op usually lands within moments, worth waiting for here rather than in a sleep.
    if (outcome !== "held" || !(await deployedWithin(chain, op.sender, HOLD_IN_PROCESS_MS))) return outcome;
  }
  let receipt = await findUserOperationReceipt(chain, hash);
  let bundle: TransactionReceipt | undefined;
  if (!receipt) {
    try {
      ({ receipt, transaction: bundle } = await enqueueOp(chain, versioned));
    } catch (err) {
      if (!(err instanceof UserOperationRejectedError)) throw err;
      // Screened before its deployment landed (or the deployment was undone): the same as above.
      if (err.code === "AA20") return awaitDeployment(db, intent, chain);
      // Its nonce is used, or its account made: by this intent's op (or an earlier signing of it, rebuilt since), which
      // is then its landing, found on chain or by the chain follower.
      if (err.code === "AA25" || err.code === "AA10") {
        const landed = await landedSigning(db, chain, intent);
        if (landed) {
          await recordLanding(db, intent, landed);
          return "landed";
        }
        // Nothing of this intent's found yet (a node behind the one that simulated the bundle): look again later. Its
        // nonce key is the intent's own, so nothing else uses it; another nonce would let its calls run twice.
        if (err.code === "AA25") return "held";
      }
      if (options.rebuild && err.code && REBUILDABLE.test(err.code)) {
        const sender = await signingSender(db, intent);
        if (sender) return rebuild(db, intent, chain, sender, { deploy: false });
      }
      await failIntent(db, intent.id, err.message);
      return "rejected";
    }
  }
  await recordLanding(db, intent, receipt, bundle);
  return "landed";
}

/** Into the relayer's next bundle, at the op's EntryPoint. */
export const enqueueOp = (chain: ChainConfig, v: VersionedOp) => (v.version === "0.8" ? enqueue(chain, v.op, { entryPointVersion: "0.8" }) : enqueue(chain, v.op));

const hasCode = async (chain: ChainConfig, address: Address) => (await publicClient(chain).getCode({ address })) !== undefined;

/** How long a held op's land step waits in-process for its account's deployment before sleeping durably. */
const HOLD_IN_PROCESS_MS = 5_000;

const deploymentWatches = new Map<string, Promise<boolean>>();

/** Whether `address` gets code within `timeoutMs`: one polling loop per address, however many ops wait for it. */
function deployedWithin(chain: ChainConfig, address: Address, timeoutMs: number): Promise<boolean> {
  const key = `${chain.chainId}:${address.toLowerCase()}`;
  let watch = deploymentWatches.get(key);
  if (!watch) {
    const deadline = Date.now() + timeoutMs;
    watch = (async () => {
      for (;;) {
        if (await hasCode(chain, address)) return true;
        if (Date.now() >= deadline) return false;
        await new Promise((resolve) => setTimeout(resolve, chain.dev ? 50 : 1_000));
      }
    })().finally(() => deploymentWatches.delete(key));
    deploymentWatches.set(key, watch);
  }
  return watch;
}

/**
 * Fails a pending intent with `reason` (no response: nothing landed); false when it had moved on. Its hold stays until
 * our paymaster's signature can no longer land (the chain follower releases it): a signed op the relay gave up on may
 * still be sent by someone else, and should it land the intent is landed after all.
 */
export async function failIntent(db: Db, intentId: string, reason: string): Promise<boolean> {
  const rows = await db
    .update(transactionIntents)
    .set({ status: "failed", error: reason, updatedAt: sql`now()` })
    .where(and(eq(transactionIntents.id, intentId), inArray(transactionIntents.status, ["pending", "broadcast"])))
    .returning({ id: transactionIntents.id });
  if (rows.length > 0) metrics.intents.inc({ outcome: "failed" });
  return rows.length > 0;
}

/**
 * The receipt of the intent's op on chain, if it landed: the current signing or an earlier one (a rebuild re-signs the
 * same calls with the same nonce, and the op it replaced may still have been mined, sent by us before or by anyone
 * holding it). The chain follower's landings of the intent first (read from the chain already), then a log search for
 * every signing's hash.
 */
async function landedSigning(db: Db, chain: ChainConfig, intent: IntentRow) {
  const [seen] = await landingsOfIntent(db, intent.id);
  if (seen) {
    const bundle = await publicClient(chain).getTransactionReceipt({ hash: seen.transactionHash as Hex });
    const found = [...receiptsFromLogs(bundle.logs, bundle.transactionHash, bundle.blockNumber)].find(([h]) => h.toLowerCase() === seen.userOperationHash);
    if (found) return found[1];
  }
  const hashes = await db.select({ hash: paymasterSignatures.userOperationHash }).from(paymasterSignatures).where(eq(paymasterSignatures.intentId, intent.id));
  const all = [...new Set([intent.userOperationHash.toLowerCase(), ...hashes.map((h) => h.hash)])] as Hex[];
  const found = await findUserOperationReceipts(chain, all);
  return [...found.values()][0] ?? null;
}

/**
 * A pending intent whose op lacks initCode while its account has no code. While another live intent deploys the
 * account it is "held". When none does (the deployer failed or was cancelled), a custodial intent becomes the
 * deployer: rebuilt with the initCode and re-signed ("retry"); a non-custodial one, whose owner signed the op
 * without initCode, can never land and fails, saying why ("rejected").
 */
async function awaitDeployment(db: Db, intent: IntentRow, chain: ChainConfig): Promise<LandingOutcome> {
  const deployer = await liveDeployer(db, intent.chainId, intent.accountId);
  if (deployer && deployer.id !== intent.id) return "held";
  // Looked after the deployer's status: a deployer that landed meanwhile has left code, so this op can go.
  const op = loadOp(intent.userOperation).op;
  if (await hasCode(chain, op.sender)) return "retry";
  const sender = await signingSender(db, intent);
  if (sender) return rebuild(db, intent, chain, sender, { deploy: true });
  const [last] = await db
    .select({ id: transactionIntents.id, status: transactionIntents.status, error: transactionIntents.error })
    .from(transactionIntents)
    .where(and(eq(transactionIntents.chainId, intent.chainId), eq(transactionIntents.accountId, intent.accountId), eq(transactionIntents.deploysAccount, true)))
    .orderBy(desc(transactionIntents.updatedAt))
    .limit(1);
  const why = last ? `: ${last.id}, which was to deploy it, is ${last.status}${last.error ? ` (${last.error})` : ""}` : "";
  await failIntent(
    db,
    intent.id,
    `Account ${op.sender} is not deployed and no intent is deploying it${why}. This operation was signed to run after the deployment, so it can never land: create the transaction intent again.`,
  );
  return "rejected";
}

/**
 * Rebuilds the intent's op ("retry"). Another intent became the deployer first: "held", to wait for it. The op can
 * no longer be built (the account cannot pay, its call now reverts): the intent fails with why.
 */
async function rebuild(db: Db, intent: IntentRow, chain: ChainConfig, sender: IntentSender, options: RebuildOptions): Promise<LandingOutcome> {
  try {
    await rebuildIntent(db, intent, chain, sender, options);
    return "retry";
  } catch (err) {
    if (violates(err, DEPLOYER_INDEX)) return "held";
    if (err instanceof ApiError && err.status < 500) {
      await failIntent(db, intent.id, err.message);
      return "rejected";
    }
    throw err;
  }
}

/**
 * A pending intent whose relay gave up (its retries exhausted on an error that is not the op's): its op is looked for
 * on chain once more, else the intent fails with the error, so that nothing stays pending for ever.
 */
export async function abandonIntent(db: Db, intentId: string, reason: string): Promise<LandingOutcome> {
  const intent = await load(db, intentId);
  if (!intent || (intent.status !== "pending" && intent.status !== "broadcast")) return settledOutcome(intent);
  const receipt = await findUserOperationReceipt(chainOf(intent), intent.userOperationHash as Hex);
  if (receipt) {
    await recordLanding(db, intent, receipt);
    return "landed";
  }
  await failIntent(db, intent.id, `The operation could not be relayed: ${reason}`);
  return "rejected";
}

export interface ConfirmationCheck {
  /** Blocks still to come on top of the intent's transaction; 0 once confirmed (and recorded). */
  remaining: number;
  /** How long those blocks should take at the chain's pace since the landing (at least 1 s, at most 30 s). */
  waitSeconds: number;
  /** Its landing left the chain (a reorg): the intent is pending again (relayed again by a job of its own) or awaits its signature. */
  reorged?: boolean;
}

/**
 * Whether the landed intents' blocks are still the chain's: those whose block at their number now has another hash
 * (or is gone) are sent back (unlandIntents) and each relayed again by one job per removed block. Returns their ids.
 */
export async function reorgedAway(db: Db, chain: ChainConfig, intents: IntentRow[], client: PublicClient = nodeClient(chain)): Promise<string[]> {
  const checked = intents.filter((i) => i.blockNumber !== null && i.blockHash !== null);
  const numbers = [...new Set(checked.map((i) => i.blockNumber!))];
  // A block this node does not have yet (it lags) says nothing: only another hash at that number is a reorg.
  const hashes = new Map(
    await Promise.all(
      numbers.map(async (n) => [n, await client.getBlock({ blockNumber: BigInt(n) }).then((b) => b.hash?.toLowerCase() ?? null, () => null)] as const),
    ),
  );
  const gone = checked.filter((i) => {
    const now = hashes.get(i.blockNumber!);
    return now !== null && now !== undefined && now !== i.blockHash!.toLowerCase();
  });
  if (gone.length === 0) return [];
  const back = await unlandIntents(db, chain, gone.map((i) => ({ id: i.id, blockHash: i.blockHash! })));
  const jobs = back.filter((i) => i.status === "pending").map((i) => reorgRelayJob(i.id, i.projectId, gone.find((g) => g.id === i.id)!.blockHash!));
  if (jobs.length) await sendJobs(jobs);
  return gone.map((i) => i.id);
}

/**
 * Whether the intent's transaction has `confirmationBlocks` blocks on top and is still in the block it landed in,
 * recorded when so; else how long to wait before looking again: the blocks still missing at the pace the chain kept
 * since the op landed, so a check rarely comes too early (one sleep, not one per block). A landing whose block left
 * the chain sends the intent back (`reorged`), as does finding it sent back already (by the chain follower).
 */
export async function checkConfirmations(db: Db, intentId: string): Promise<ConfirmationCheck> {
  const intent = await load(db, intentId);
  if (!intent || intent.confirmedAt) return { remaining: 0, waitSeconds: 0 };
  if (intent.blockNumber === null) return { remaining: 0, waitSeconds: 0, reorged: intent.status === "pending" || intent.status === "awaiting_signature" };
  const chain = chainOf(intent);
  // The head and the landing's block from one node: a lagging node's head beside another's block is no reorg.
  const client = nodeClient(chain);
  const left = confirmationsLeft(intent, await client.getBlock({ blockTag: "latest" }));
  if (left.remaining > 0) return left;
  if ((await reorgedAway(db, chain, [intent], client)).length > 0) return { remaining: 0, waitSeconds: 0, reorged: true };
  await db.update(transactionIntents).set({ confirmedAt: sql`now()` }).where(and(eq(transactionIntents.id, intent.id), eq(transactionIntents.blockHash, intent.blockHash ?? "")));
  return { remaining: 0, waitSeconds: 0 };
}

/**
 * Cancels an intent still awaiting its signature (by default: its sponsorship has ended), unless its op is on chain:
 * the owner may have signed and sent it themselves, and then it is landed, never cancelled. False when it moved on.
 * Its hold stays until the chain shows the signature can no longer land (the chain follower releases it).
 */
export async function cancelUnsigned(db: Db, intentId: string, reason = "not signed before its sponsorship ended"): Promise<boolean> {
  const intent = await load(db, intentId);
  if (!intent || intent.status !== "awaiting_signature") return false;
  const receipt = await findUserOperationReceipt(chainOf(intent), intent.userOperationHash as Hex);
  if (receipt) {
    await recordLanding(db, intent, receipt);
    await sendJobs([chainLandedJob(intent.id, intent.projectId)]);
    return false;
  }
  const cancelled = await db
    .update(transactionIntents)
    .set({ status: "cancelled", error: reason, updatedAt: sql`now()` })
    .where(and(eq(transactionIntents.id, intentId), eq(transactionIntents.status, "awaiting_signature")))
    .returning({ id: transactionIntents.id });
  return cancelled.length > 0;
}

/**
 * Intents whose background run may never have been queued (the process died between recording
 * them and sending the event): pending, or sponsored and awaiting a signature, unchanged for a
 * minute. Only the last day's: Inngest forgets event ids after 24 hours, so older ones could run twice.
 */
export async function unsettledIntents(db: Db, limit = 1000) {
  return db
    .select({ id: transactionIntents.id, projectId: transactionIntents.projectId, status: transactionIntents.status })
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

