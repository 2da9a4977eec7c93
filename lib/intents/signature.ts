import { and, eq, sql } from "drizzle-orm";
import { isAddressEqual, recoverMessageAddress, type Address, type Hex } from "viem";
import { getAccount } from "@/lib/accounts/service";
import { signingOwner } from "@/lib/accounts/token-bound";
import { accountTypeInfo } from "@/lib/accounts/types";
import { findChain } from "@/lib/chain/registry";
import { simulateHandleOp, UserOperationRejectedError } from "@/lib/chain/userop";
import type { Queryable } from "@/lib/db/client";
import { transactionIntents } from "@/lib/db/schema";
import { ApiError, badRequest } from "@/lib/http/errors";
import type { ProjectContext } from "@/lib/projects/service";
import { getIntent, type IntentRow } from "./service";
import { deserializeUserOp } from "./userop-json";
import { lockSessionKey } from "@/lib/sessions/chain";
import { sessionKeyJudge, sessionOfKey } from "./session-keys";

/**
 * Accepts the owner's (or an active session key's) signature of an intent's userOperationHash, after checking it, so
 * that nothing is ever relayed with a bad signature. A session key's is checked against the chain first (window,
 * uses left counting its intents in flight, whitelist) and its op simulated, each refusal a 400 naming why.
 */
export async function submitSignature(db: Queryable, ctx: ProjectContext, id: string, signature: Hex): Promise<IntentRow> {
  const intent = await getIntent(db, ctx, id);
  if (intent.status !== "awaiting_signature") {
    throw new ApiError(409, "invalid_request_error", `Transaction intent ${id} is not awaiting a signature (it is ${intent.status}).`);
  }
  const account = await getAccount(db, ctx, intent.accountId);
  // Who may sign as the owner: for a token-bound account, whoever holds its token now.
  const owner = await signingOwner(account);
  let signer: Address;
  try {
    signer = await recoverMessageAddress({ message: { raw: intent.userOperationHash as Hex }, signature });
  } catch {
    throw badRequest("The signature is not a valid 65-byte ECDSA signature.", { signature: { value: signature, message: "malformed" } });
  }
  const op = { ...intent.userOperation, signature };
  if (isAddressEqual(signer, owner)) return markSigned(db, intent, op, intent.sessionId);
  const notASigner = (why: string) =>
    badRequest(`The signature recovers to ${signer}, which is neither the owner ${owner} nor a session key of account ${account.id} (${why}). Sign the userOperationHash (personal_sign of its 32 bytes).`, {
      signature: { value: signature, message: `signed by ${signer}` },
    });
  const sessions: boolean = accountTypeInfo(account.accountType)?.sessions ?? true;
  if (!sessions) throw notASigner(`${account.accountType} accounts have no session keys`);
  const chain = findChain(account.chainId);
  if (!chain) throw badRequest(`Chain ${account.chainId} of account ${account.id} is not configured any more.`);
  // The chain is asked (the key's state, then a simulation of the signed op) before the transaction that takes the
  // key's lock: no chain call holds it open. Under the lock only the in-flight uses are counted again.
  const judge = await sessionKeyJudge({ chain, account: { id: account.id, address: account.address as Address }, key: signer, op: deserializeUserOp(op) });
  const refuse = (refused: { why: string; unknownKey: boolean } | null) => {
    if (refused?.unknownKey) throw notASigner(refused.why);
    if (refused) throw badRequest(`The session key's signature cannot be used: ${refused.why}.`, { signature: { value: signature, message: refused.why } });
  };
  refuse(await judge(db));
  try {
    await simulateHandleOp(chain, deserializeUserOp(op));
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

async function markSigned(db: Queryable, intent: IntentRow, op: Record<string, string>, sessionId: string | null): Promise<IntentRow> {
  const [row] = await db
    .update(transactionIntents)
    .set({ userOperation: op, status: "pending", sessionId, updatedAt: sql`now()` })
    .where(and(eq(transactionIntents.id, intent.id), eq(transactionIntents.status, "awaiting_signature")))
    .returning();
  if (!row) throw new ApiError(409, "invalid_request_error", `Transaction intent ${intent.id} is not awaiting a signature any more.`);
  return row;
}
