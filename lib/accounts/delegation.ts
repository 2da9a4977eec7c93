// Delegated_v08 accounts: the player's EOA delegating (EIP-7702) to our DelegatedAccountV8. What its code says now, as
// the account shows it, and the refusal when someone delegated it elsewhere (never undone behind the owner's back).
import { eq, sql } from "drizzle-orm";
import { getAddress, type Address } from "viem";
import { onChain } from "@/lib/chain/clients";
import { serviceDeployment } from "@/lib/chain/contracts";
import { delegationOf } from "@/lib/chain/eip7702";
import type { ChainConfig } from "@/lib/chain/registry";
import type { Queryable } from "@/lib/db/client";
import { accounts } from "@/lib/db/schema";
import { ApiError, conflict } from "@/lib/errors";
import { delegationStatus } from "@/lib/account-records/delegation-field";

type DelegatedRow = Pick<typeof accounts.$inferSelect, "id" | "accountType" | "address" | "delegatedTo" | "deployed">;

/** The 409 for an EOA that delegates elsewhere: the service does not take it back silently. */
export function foreignDelegation(account: Pick<DelegatedRow, "id" | "address">, delegate: Address): ApiError {
  const ours = serviceDeployment().delegatedAccountV08;
  return conflict(`Account ${account.id} (${account.address}) delegates to ${getAddress(delegate)}, not to this service's DelegatedAccountV8 ${ours}: its delegation was changed outside this service, which does not re-delegate it. Its owner can delegate it back by signing an EIP-7702 authorization for ${ours} (signedAuthorization), or keep it as it is.`);
}

/**
 * Reads whom the account's EOA delegates to now and records it (and `deployed`: delegating to ours) when it changed.
 * Returns the row as updated. Does not refuse anything: callers decide what a foreign delegation means for them.
 */
export async function refreshDelegation<T extends DelegatedRow>(db: Queryable, chain: ChainConfig, account: T): Promise<T> {
  const { delegate, hasCode } = await onChain(chain, () => delegationOf(chain, account.address as Address));
  // Code that is no delegation designator cannot be at an EOA's address: treated as foreign, with the address itself.
  const delegatedTo = delegate ? getAddress(delegate) : hasCode ? getAddress(account.address) : null;
  const deployed = delegationStatus(delegatedTo) === "ours";
  if (delegatedTo === account.delegatedTo && deployed === account.deployed) return account;
  await db.update(accounts).set({ delegatedTo, deployed, updatedAt: sql`now()` }).where(eq(accounts.id, account.id));
  return { ...account, delegatedTo, deployed };
}
