// Whose operation the ERC-7677 service is asked to sponsor: the sender must be the project's own account on the
// chain, or (unless the policy opts in to outside accounts) nothing is signed.
import { eq, sql } from "drizzle-orm";
import { getAddress, isAddressEqual, type Address, type Hex } from "viem";
import { accountFactoryInitCode, counterfactualAddress } from "@/lib/chain/accounts";
import type { Queryable } from "@/lib/db/client";
import { accounts, developerAccounts, playerIdentities } from "@/lib/db/schema";
import { inScope } from "@/lib/db/scope";
import { WALLET_PROVIDER } from "@/lib/iam/siwe";
import type { PolicyRow } from "@/lib/policies/service";
import type { ProjectContext } from "@/lib/projects/service";

export interface OperationSender {
  address: Address;
  /** The project's account (acc_ or dac_); null for an outside sender. */
  accountId: string | null;
  /** The player whose account it is, if any: interval rules count per player. */
  playerId: string | null;
}

/** The sender was not the project's: names the sender and why, and how a policy can opt in. */
export class UnknownSenderError extends Error {
  constructor(
    readonly sender: Address,
    chainId: number,
    policy: PolicyRow,
  ) {
    super(
      `The sender ${sender} is not an account of this project on chain ${chainId} (nor a first operation deploying one through this service's ` +
        `AccountFactory for an owner of the project's players), so policy ${policy.id} does not sponsor it. ` +
        "Create the account through the API first, or set sponsorOutsideAccounts on the policy to sponsor other accounts.",
    );
  }
}

/**
 * The owner a first operation's initCode deploys `sender` for, when it calls our AccountFactory and its CREATE2
 * address is the sender (any other initCode fails in the EntryPoint or is refused by estimation).
 */
function factoryOwner(sender: Address, initCode: Hex): Address | null {
  const deployment = accountFactoryInitCode(initCode);
  if (!deployment || !isAddressEqual(counterfactualAddress(deployment.owner, deployment.salt, deployment.guardian), sender)) return null;
  return deployment.owner;
}

/**
 * The project's account behind `sender` on the chain: a player's account (deployed or counterfactual), a custodial
 * developer account, or a first operation deploying an account through our factory for an owner the project knows
 * (a player's wallet identity, or the owner of one of its players' accounts). Otherwise the policy must opt in to
 * outside accounts, or UnknownSenderError.
 */
export async function operationSender(db: Queryable, ctx: ProjectContext, chainId: number, op: { sender: Address; initCode?: Hex }, policy: PolicyRow): Promise<OperationSender> {
  const address = getAddress(op.sender);
  const [account] = await db
    .select({ id: accounts.id, playerId: accounts.playerId })
    .from(accounts)
    .where(inScope(accounts, ctx, eq(accounts.chainId, chainId), eq(accounts.address, address)))
    .limit(1);
  if (account) return { address, accountId: account.id, playerId: account.playerId };

  const [developer] = await db
    .select({ id: developerAccounts.id })
    .from(developerAccounts)
    .where(inScope(developerAccounts, ctx, eq(developerAccounts.custodial, true), eq(developerAccounts.deleted, false), sql`lower(${developerAccounts.address}) = ${address.toLowerCase()}`))
    .limit(1);
  if (developer) return { address, accountId: developer.id, playerId: null };

  const owner = factoryOwner(address, op.initCode ?? "0x");
  if (owner) {
    const [identity] = await db
      .select({ playerId: playerIdentities.playerId })
      .from(playerIdentities)
      .where(inScope(playerIdentities, ctx, eq(playerIdentities.provider, WALLET_PROVIDER), eq(playerIdentities.externalUserId, owner.toLowerCase()), eq(playerIdentities.disabled, false)))
      .limit(1);
    const [owned] = identity
      ? [identity]
      : await db.select({ playerId: accounts.playerId }).from(accounts).where(inScope(accounts, ctx, sql`lower(${accounts.ownerAddress}) = ${owner.toLowerCase()}`)).limit(1);
    if (owned) return { address, accountId: null, playerId: owned.playerId };
  }

  if (policy.sponsorOutsideAccounts) return { address, accountId: null, playerId: null };
  throw new UnknownSenderError(address, chainId, policy);
}
