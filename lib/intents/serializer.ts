import { unixSeconds } from "@/lib/http/resource";
import type { IntentResponse } from "./schema";
import type { IntentRow } from "./service";

type Refs = Partial<Pick<IntentResponse, "player" | "account" | "policy">>;

export function serializeIntent(row: IntentRow, refs: Refs = {}): IntentResponse {
  const op = row.userOperation;
  return {
    id: row.id,
    object: "transactionIntent",
    createdAt: unixSeconds(row.createdAt),
    updatedAt: unixSeconds(row.updatedAt),
    chainId: row.chainId,
    abstractionType: "accountAbstractionV6",
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
    ...(row.status === "awaiting_signature"
      ? {
          nextAction: {
            type: "sign_with_wallet" as const,
            payload: { userOperationHash: row.userOperationHash, userOperation: op, userOpHash: row.userOperationHash, userOp: op },
          },
        }
      : {}),
  };
}
