import { and, eq, sql } from "drizzle-orm";
import { isAddressEqual, recoverMessageAddress, type Address, type Hex } from "viem";
import { smartAccountAbi } from "@/contracts/artifacts";
import { getAccount, type AccountRow } from "@/lib/accounts/service";
import { publicClient } from "@/lib/chain/clients";
import { findChain } from "@/lib/chain/registry";
import type { Queryable } from "@/lib/db/client";
import { transactionIntents } from "@/lib/db/schema";
import { ApiError, badRequest } from "@/lib/http/errors";
import type { ProjectContext } from "@/lib/projects/service";
import { getIntent, type IntentRow } from "./service";

/**
 * Accepts the owner's (or a valid session key's) signature of a non-custodial intent's
 * userOperationHash, after checking it, so that nothing is ever relayed with a bad signature.
 */
export async function submitSignature(db: Queryable, ctx: ProjectContext, id: string, signature: Hex): Promise<IntentRow> {
  const intent = await getIntent(db, ctx, id);
  if (intent.status !== "awaiting_signature") {
    throw new ApiError(409, "invalid_request_error", `Transaction intent ${id} is not awaiting a signature (it is ${intent.status}).`);
  }
  const account = await getAccount(db, ctx, intent.accountId);
  let signer: Address;
  try {
    signer = await recoverMessageAddress({ message: { raw: intent.userOperationHash as Hex }, signature });
  } catch {
    throw badRequest("The signature is not a valid 65-byte ECDSA signature.", { signature: { value: signature, message: "malformed" } });
  }
  if (!isAddressEqual(signer, account.ownerAddress as Address) && !(await isActiveSessionKey(account, signer))) {
    throw badRequest(`The signature recovers to ${signer}, which is neither the owner ${account.ownerAddress} nor an active session key of account ${account.id}. Sign the userOperationHash (personal_sign of its 32 bytes).`, {
      signature: { value: signature, message: `signed by ${signer}` },
    });
  }
  const op = { ...intent.userOperation, signature };
  const [row] = await db
    .update(transactionIntents)
    .set({ userOperation: op, status: "pending", updatedAt: sql`now()` })
    .where(and(eq(transactionIntents.id, id), eq(transactionIntents.status, "awaiting_signature")))
    .returning();
  if (!row) throw new ApiError(409, "invalid_request_error", `Transaction intent ${id} is not awaiting a signature any more.`);
  return row;
}

async function isActiveSessionKey(account: AccountRow, key: Address): Promise<boolean> {
  if (!account.deployed) return false;
  const chain = findChain(account.chainId);
  if (!chain) return false;
  const [, validUntil, , , active] = await publicClient(chain).readContract({
    address: account.address as Address,
    abi: smartAccountAbi,
    functionName: "getSessionKey",
    args: [key],
  });
  return active && validUntil > Math.floor(Date.now() / 1000);
}
