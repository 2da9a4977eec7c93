// What the chain says of intents beyond our relayer: an op landed by someone else (the owner's own handleOps, an
// outside bundler, an earlier signing of a rebuilt op) makes its intent landed, never cancelled; a landing whose
// block left the chain (a reorg) sends its intent back, and what the service learned from it (the account deployed,
// its EIP-7702 delegation) goes with it.
import { and, eq, inArray, sql } from "drizzle-orm";
import { decodeFunctionData, isAddressEqual, type Address, type Hex, type Transaction, type TransactionReceipt } from "viem";
import { entryPointAbi, entryPointV08Abi } from "@/contracts/artifacts";
import { publicClient } from "@/lib/chain/clients";
import { delegationOf } from "@/lib/chain/eip7702";
import type { ChainConfig } from "@/lib/chain/registry";
import { receiptsFromLogs } from "@/lib/chain/relayer";
import type { Db } from "@/lib/db/client";
import { accounts, transactionIntents } from "@/lib/db/schema";
import { isUnsignedAuthorization, loadOp, storeOp, type VersionedOp } from "@/lib/intent-records/versioned-op";
import { publishIntentEvents } from "@/lib/deliveries/publish";
import { log } from "@/lib/log";
import { DEPLOYER_INDEX, violates } from "./deployer";
import { recordLandings, type Landing } from "./landing";
import type { IntentRow } from "./service";

/** An op of one of our paymasters found on chain for an intent. */
export interface FoundOnChain {
  intentId: string;
  transactionHash: Hex;
  userOpHash: Hex;
}

const unsigned = (v: VersionedOp) => v.op.signature === "0x" || (v.version === "0.8" && isUnsignedAuthorization(v.op.authorization));

/**
 * The intent's op as it landed, from the bundle's own handleOps input: the owner's signature (and a signed EIP-7702
 * authorization) that the service never saw, so the op can be sent again should a reorg drop it. Null when the
 * bundle is not a plain handleOps of ours (a bundler's own wrapper: what landed cannot be read from its input).
 */
function signedAsLanded(v: VersionedOp, transaction: Transaction): VersionedOp | null {
  try {
    if (v.version === "0.8") {
      const call = decodeFunctionData({ abi: entryPointV08Abi, data: transaction.input });
      if (call.functionName !== "handleOps") return null;
      const op = call.args[0].find((o) => isAddressEqual(o.sender, v.op.sender) && o.nonce === v.op.nonce);
      if (!op) return null;
      const authorization = v.op.authorization && isUnsignedAuthorization(v.op.authorization)
        ? transaction.authorizationList?.find((a) => isAddressEqual(a.address, v.op.authorization!.address) && a.nonce === v.op.authorization!.nonce)
        : v.op.authorization;
      return { version: "0.8", op: { ...v.op, signature: op.signature, ...(authorization && { authorization }) } };
    }
    const call = decodeFunctionData({ abi: entryPointAbi, data: transaction.input });
    if (call.functionName !== "handleOps") return null;
    const op = call.args[0].find((o) => isAddressEqual(o.sender, v.op.sender) && o.nonce === v.op.nonce);
    return op ? { version: "0.6", op: { ...v.op, signature: op.signature } } : null;
  } catch {
    return null;
  }
}

/**
 * Records intents whose op the chain follower found landed outside our relayer: each bundle's receipt (and, for an
 * intent that still awaited its owner's signature, the signature that landed) read once, then recordLandings. Intents
 * already landed are left as they are. Returns the intents recorded now.
 */
export async function landFromChain(db: Db, chain: ChainConfig, found: FoundOnChain[]): Promise<IntentRow[]> {
  if (found.length === 0) return [];
  const rows = await db.select().from(transactionIntents).where(inArray(transactionIntents.id, [...new Set(found.map((f) => f.intentId))]));
  const open = rows.filter((r) => r.blockHash === null && r.transactionHash === null);
  if (open.length === 0) return [];
  const client = publicClient(chain);
  const bundles = new Map<Hex, Promise<{ receipt: TransactionReceipt; transaction: Transaction }>>();
  const bundle = (hash: Hex) => {
    if (!bundles.has(hash)) bundles.set(hash, Promise.all([client.getTransactionReceipt({ hash }), client.getTransaction({ hash })]).then(([receipt, transaction]) => ({ receipt, transaction })));
    return bundles.get(hash)!;
  };
  const landings: Landing[] = [];
  for (const intent of open) {
    const hit = found.find((f) => f.intentId === intent.id)!;
    const { receipt, transaction } = await bundle(hit.transactionHash);
    const opReceipt = [...receiptsFromLogs(receipt.logs, receipt.transactionHash, receipt.blockNumber)].find(([hash]) => hash.toLowerCase() === hit.userOpHash.toLowerCase())?.[1];
    if (!opReceipt) continue;
    const stored = loadOp(intent.userOperation);
    if (unsigned(stored)) {
      const landed = signedAsLanded(stored, transaction);
      if (landed) await db.update(transactionIntents).set({ userOperation: storeOp(landed) }).where(eq(transactionIntents.id, intent.id));
    }
    landings.push({ intent, receipt: opReceipt, bundle: receipt });
  }
  await recordLandings(db, landings);
  const recorded = landings.length ? await db.select().from(transactionIntents).where(inArray(transactionIntents.id, landings.map((l) => l.intent.id))) : [];
  for (const intent of recorded) {
    log.info({ intentId: intent.id, status: intent.status, transactionHash: intent.transactionHash }, "intent landed outside the relayer (found on chain)");
  }
  return recorded.filter((r) => r.transactionHash !== null);
}

/** The status an intent goes back to when its landing leaves the chain: its op signed (pending, to be looked for or sent again), or not. */
const backTo = sql`case when coalesce(${transactionIntents.userOperation}->>'signature', '0x') in ('0x', '') then 'awaiting_signature' else 'pending' end`;

const cleared = {
  status: backTo as never,
  transactionHash: null,
  blockNumber: null,
  blockHash: null,
  gasUsed: null,
  gasCost: null,
  response: null,
  error: null,
  confirmedAt: null,
  updatedAt: sql`now()`,
};

/**
 * Intents whose landing's block (`blockHash`) left the chain: back to pending (or awaiting their owner's signature
 * when it never reached the service) and no longer confirmed, unless they have landed again meanwhile. A deploying
 * op's account with no code any more is not deployed (its next op deploys it again); a delegated EOA's delegation is
 * read again. A deployer that another live intent has since replaced fails instead (its op may still land: found on
 * chain, it is landed again). Returns the intents sent back.
 */
export async function unlandIntents(db: Db, chain: ChainConfig, removed: { id: string; blockHash: string }[]): Promise<IntentRow[]> {
  const back: IntentRow[] = [];
  for (const { id, blockHash } of removed) {
    const where = and(eq(transactionIntents.id, id), eq(transactionIntents.blockHash, blockHash));
    try {
      back.push(...(await db.update(transactionIntents).set(cleared).where(where).returning()));
    } catch (err) {
      if (!violates(err, DEPLOYER_INDEX)) throw err;
      const error = "Its landing was removed from the chain by a reorg, and another intent now deploys its account.";
      back.push(...(await db.update(transactionIntents).set({ ...cleared, status: "failed", error }).where(where).returning()));
    }
  }
  if (back.length === 0) return back;
  log.warn({ chainId: chain.chainId, intents: back.map((i) => i.id) }, "intents' landings left the chain (reorg): sent back");
  // Those that failed instead are final: no relay follows to notify them.
  const failed = back.filter((i) => i.status === "failed");
  if (failed.length) await publishIntentEvents(db, failed, "transaction_intent.failed");
  // What the landing taught about the accounts, read again from the chain as it is now.
  const byAccount = new Map(back.map((i) => [i.accountId, loadOp(i.userOperation)]));
  for (const [accountId, v] of byAccount) {
    const { delegate, hasCode } = await delegationOf(chain, v.op.sender as Address);
    if (v.version === "0.8" && v.op.authorization) {
      await db.update(accounts).set({ delegatedTo: delegate, deployed: delegate !== null, updatedAt: sql`now()` }).where(eq(accounts.id, accountId));
    } else if (!hasCode) {
      await db.update(accounts).set({ deployed: false, updatedAt: sql`now()` }).where(and(eq(accounts.id, accountId), eq(accounts.deployed, true)));
    }
  }
  return back;
}
