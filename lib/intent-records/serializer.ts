import { unixSeconds } from "@/lib/http/resource";
import type { IntentResponse } from "@/lib/intents/schema";
import type { IntentRow } from "@/lib/intents/service";
import { deserializeUserOpV08, isStoredV08, isUnsignedAuthorization, userOperationTypedDataJson } from "./versioned-op";

/**
 * What the owner signs for an intent awaiting it. v0.6: personal_sign of the hash. v0.8: the hash itself, the EIP-712
 * digest of the packed op (typedData, so a wallet shows what it signs); first the EOA's EIP-7702 authorization when the
 * op of an owner-held delegated account still carries it unsigned (sign_authorization).
 */
function signingPayload(row: IntentRow) {
  const op = row.userOperation;
  const base = { userOperationHash: row.userOperationHash, userOperation: op, userOpHash: row.userOperationHash, userOp: op };
  if (!isStoredV08(op)) return { type: "sign_with_wallet" as const, payload: base };
  const v08 = deserializeUserOpV08(op);
  const typedData = userOperationTypedDataJson({ chainId: row.chainId }, v08);
  const auth = v08.authorization;
  if (auth && isUnsignedAuthorization(auth)) {
    return {
      type: "sign_authorization" as const,
      payload: {
        ...base,
        signWith: "typed_data" as const,
        typedData,
        authorization: { contractAddress: auth.address, address: auth.address, chainId: auth.chainId, nonce: auth.nonce },
      },
    };
  }
  return { type: "sign_with_wallet" as const, payload: { ...base, signWith: "typed_data" as const, typedData } };
}

type Refs = Partial<Pick<IntentResponse, "player" | "account" | "policy">>;

export function serializeIntent(row: IntentRow, refs: Refs = {}): IntentResponse {
  const op = row.userOperation;
  return {
    id: row.id,
    object: "transactionIntent",
    createdAt: unixSeconds(row.createdAt),
    updatedAt: unixSeconds(row.updatedAt),
    chainId: row.chainId,
    abstractionType: isStoredV08(op) ? "accountAbstractionV8" : "accountAbstractionV6",
    // Both shapes the API has had: top level and inside details.
    userOperationHash: row.userOperationHash,
    userOperation: op,
    details: { userOperationHash: row.userOperationHash, userOperation: op },
    interactions: row.interactions,
    ...(row.source === "rpc" ? { source: "rpc" as const } : {}),
    // A developer account's intent has no player.
    ...(row.playerId ? { player: refs.player ?? { id: row.playerId } } : {}),
    account: refs.account ?? { id: row.accountId },
    ...(row.policyId ? { policy: refs.policy ?? { id: row.policyId } } : {}),
    ...(row.sponsorshipDecline ? { sponsorshipDecline: row.sponsorshipDecline as IntentResponse["sponsorshipDecline"] } : {}),
    ...(row.response ? { response: row.response as IntentResponse["response"] } : {}),
    ...(row.status === "awaiting_signature" ? { nextAction: signingPayload(row) } : {}),
  };
}
