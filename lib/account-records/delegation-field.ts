// The `delegation` field of a Delegated_v08 account, as its API shape shows it: below lib/accounts and lib/players,
// whose presenters embed accounts (lib/accounts/delegation.ts reads and refreshes the delegation itself).
import { getAddress, isAddressEqual, type Address } from "viem";
import { serviceDeployment } from "@/lib/chain/contracts";
import { isDelegatedType } from "./types";

/** "none": a plain EOA so far; "ours": delegating to DelegatedAccountV8; "foreign": delegating to something else. */
export type DelegationStatus = "none" | "ours" | "foreign";

export const delegationStatus = (delegatedTo: string | null): DelegationStatus =>
  delegatedTo === null ? "none" : isAddressEqual(delegatedTo as Address, serviceDeployment().delegatedAccountV08) ? "ours" : "foreign";

/** The `delegation` field of a Delegated_v08 account's response (undefined for other types). */
export function delegationField(row: { accountType: string; delegatedTo: string | null }) {
  if (!isDelegatedType(row.accountType)) return undefined;
  return {
    status: delegationStatus(row.delegatedTo),
    address: row.delegatedTo === null ? null : getAddress(row.delegatedTo),
    implementation: serviceDeployment().delegatedAccountV08,
  };
}
