import { unixSeconds } from "@/lib/http/resource";
import type { AccountResponse } from "@/lib/accounts/schema";
import type { AccountRow } from "@/lib/accounts/service";
import { delegationField } from "./delegation-field";
import { responseAccountType } from "./types";

/** `player` is `{id}` unless the caller passes the expanded player. */
export function serializeAccount(
  row: AccountRow,
  player: AccountResponse["player"] = { id: row.playerId },
  transactionIntents: AccountResponse["transactionIntents"] = [],
): AccountResponse {
  const delegation = delegationField(row);
  return {
    id: row.id,
    object: "account",
    createdAt: unixSeconds(row.createdAt),
    address: row.address,
    ownerAddress: row.ownerAddress,
    ...(row.pendingOwnerAddress ? { pendingOwnerAddress: row.pendingOwnerAddress } : {}),
    deployed: row.deployed,
    custodial: row.custodial,
    embeddedSigner: row.embeddedSigner,
    chainId: row.chainId,
    accountType: responseAccountType(row.accountType),
    ...(row.tokenContract !== null && row.tokenId !== null ? { tokenContract: row.tokenContract, tokenId: row.tokenId } : {}),
    ...(delegation ? { delegation } : {}),
    player,
    transactionIntents,
  };
}
