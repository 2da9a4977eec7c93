import { and, eq, sql } from "drizzle-orm";
import { isAddressEqual, type Address, type Hex, type SignedAuthorization } from "viem";
import { getAccount } from "@/lib/accounts/service";
import { signingOwner } from "@/lib/accounts/token-bound";
import { accountTypeInfo } from "@/lib/account-records/types";
import { findChain } from "@/lib/chain/registry";
import { authorizationProblem } from "@/lib/chain/eip7702";
import type { ChainConfig } from "@/lib/chain/registry";
import { simulateHandleOp, simulateHandleOpV08, UserOperationRejectedError } from "@/lib/chain/userop";
import type { Queryable } from "@/lib/db/client";
import { transactionIntents } from "@/lib/db/schema";
import { badRequest, conflict } from "@/lib/errors";
import type { ProjectContext } from "@/lib/tenant";
import { getIntent, type IntentRow } from "./service";
import { isStoredV08, isUnsignedAuthorization, loadOp, opSigner, serializeUserOpV08, type StoredOp, type VersionedOp } from "@/lib/intent-records/versioned-op";
import { lockSessionKey } from "@/lib/session-keys/chain";
import { sessionKeyJudge, sessionOfKey } from "./session-keys";

/**
 * Accepts the owner's (or an active session key's) signature of an intent's userOperationHash, after checking it, so
 * that nothing is ever relayed with a bad signature. A session key's is checked against the chain first (window,
 * uses left counting its intents in flight, whitelist) and its op simulated, each refusal a 400 naming why.
 */
export async function submitSignature(db: Queryable, ctx: ProjectContext, id: string, signature: Hex, signedAuthorization?: SignedAuthorization): Promise<IntentRow> {
  const intent = await getIntent(db, ctx, id);
  if (intent.status !== "awaiting_signature") {
    throw conflict(`Transaction intent ${id} is not awaiting a signature (it is ${intent.status}).`);
  }
  const account = await getAccount(db, ctx, intent.accountId);
  // Who may sign as the owner: for a token-bound account, whoever holds its token now.
  const owner = await signingOwner(account);
  const v08 = isStoredV08(intent.userOperation);
  const signer = await opSigner(intent.userOperation, intent.userOperationHash as Hex, signature);
  if (!signer) throw badRequest("The signature is not a valid 65-byte ECDSA signature.", { signature: { value: signature, message: "malformed" } });
  const chain = findChain(account.chainId);
  if (!chain) throw badRequest(`Chain ${account.chainId} of account ${account.id} is not configured any more.`);
  const op = await withAuthorization(chain, account.address as Address, { ...intent.userOperation, signature }, signedAuthorization);
  if (isAddressEqual(signer, owner)) return markSigned(db, intent, op, intent.sessionId);
  const how = v08
    ? "the raw ECDSA signature of the userOperationHash: eth_signTypedData_v4 of nextAction.payload.typedData"
    : "personal_sign of its 32 bytes";
  const notASigner = (why: string) =>
    badRequest(`The signature recovers to ${signer}, which is neither the owner ${owner} nor a session key of account ${account.id} (${why}). Sign the userOperationHash (${how}).`, {
      signature: { value: signature, message: `signed by ${signer}` },
    });
  const sessions: boolean = accountTypeInfo(account.accountType)?.sessions ?? true;
  if (!sessions) throw notASigner(`${account.accountType} accounts have no session keys`);
  const versioned = loadOp(op);
  // The chain is asked (the key's state, then a simulation of the signed op) before the transaction that takes the
  // key's lock: no chain call holds it open. Under the lock only the in-flight uses are counted again.
  const judge = await sessionKeyJudge({ chain, account: { id: account.id, address: account.address as Address }, key: signer, op: versioned });
  const refuse = (refused: { why: string; unknownKey: boolean } | null) => {
    if (refused?.unknownKey) throw notASigner(refused.why);
    if (refused) throw badRequest(`The session key's signature cannot be used: ${refused.why}.`, { signature: { value: signature, message: refused.why } });
  };
  refuse(await judge(db));
  try {
    await simulate(chain, versioned);
  } catch (err) {
    if (!(err instanceof UserOperationRejectedError)) throw err;
    throw badRequest(`The session key's signature cannot be used: ${err.message}`, { signature: { value: signature, message: err.reason } });
  }
  return db.transaction(async (tx) => {
    await lockSessionKey(tx, account.id, signer);
    refuse(await judge(tx));
    return markSigned(tx, intent, op, await sessionOfKey(tx, account.id, signer));
  });
}

/** Validation of the signed op in simulation: v0.8's simulation does not enforce signatures, so a failed one is refused here. */
async function simulate(chain: ChainConfig, v: VersionedOp) {
  if (v.version === "0.6") return void (await simulateHandleOp(chain, v.op));
  const result = await simulateHandleOpV08(chain, v.op);
  if (result.account.sigFailed) throw new UserOperationRejectedError("AA24 signature error");
}

/**
 * The stored op with the owner's EIP-7702 authorization in place of the unsigned one it carries (an owner-held
 * Delegated_v08 account's first intent): the same implementation and chain the op's hash binds, the EOA's nonce now,
 * signed by the EOA. Refused when the op needs none, or needs one and gets none.
 */
async function withAuthorization(chain: ChainConfig, eoa: Address, stored: StoredOp, given: SignedAuthorization | undefined): Promise<StoredOp> {
  const loaded = isStoredV08(stored) ? loadOp(stored) : null;
  const op = loaded?.version === "0.8" ? loaded.op : null;
  const pending = op && isUnsignedAuthorization(op.authorization) ? op.authorization! : null;
  if (!pending) {
    if (given) throw badRequest("This intent's operation carries no EIP-7702 authorization to sign: omit signedAuthorization.", { signedAuthorization: { message: "not needed" } });
    return stored;
  }
  const what = `an EIP-7702 authorization to ${pending.address} on chain ${pending.chainId} with the EOA's current nonce`;
  if (!given) {
    throw badRequest(`This intent's operation delegates the account's EOA first: send signedAuthorization too, ${what} (nextAction.payload.authorization).`, {
      signedAuthorization: { message: "required: the owner's signed EIP-7702 authorization" },
    });
  }
  if (!isAddressEqual(given.address, pending.address)) {
    throw badRequest(`signedAuthorization delegates to ${given.address}, but the operation was built for ${pending.address}: sign ${what}.`, {
      signedAuthorization: { value: given.address, message: `expected ${pending.address}` },
    });
  }
  const problem = await authorizationProblem(chain, eoa, given);
  if (problem) throw badRequest(`signedAuthorization cannot delegate the account: ${problem}.`, { signedAuthorization: { message: problem } });
  return serializeUserOpV08({ ...op!, authorization: given });
}

async function markSigned(db: Queryable, intent: IntentRow, op: Record<string, string>, sessionId: string | null): Promise<IntentRow> {
  const [row] = await db
    .update(transactionIntents)
    .set({ userOperation: op, status: "pending", sessionId, updatedAt: sql`now()` })
    .where(and(eq(transactionIntents.id, intent.id), eq(transactionIntents.status, "awaiting_signature")))
    .returning();
  if (!row) throw conflict(`Transaction intent ${intent.id} is not awaiting a signature any more.`);
  return row;
}
