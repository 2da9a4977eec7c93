// Whose operation the ERC-7677 service is asked to sponsor: the sender must be the project's own account on the
// chain, or (unless the policy opts in to outside accounts) nothing is signed.
import { eq, sql } from "drizzle-orm";
import { getAddress, isAddressEqual, type Address, type Hex } from "viem";
import { entryPointVersionOf, isDelegatedType } from "@/lib/account-records/types";
import { accountFactoryInitCode, counterfactualAddress } from "@/lib/chain/accounts";
import { accountFactoryInitCodeV08, counterfactualAddressV08 } from "@/lib/chain/accounts-v08";
import { onChain } from "@/lib/chain/clients";
import { serviceDeployment } from "@/lib/chain/contracts";
import { delegationOf } from "@/lib/chain/eip7702";
import type { ChainConfig } from "@/lib/chain/registry";
import { isEip7702Factory, type UserOpV08 } from "@/lib/chain/userop";
import type { Queryable } from "@/lib/db/client";
import { accounts, developerAccounts, playerIdentities } from "@/lib/db/schema";
import { inScope } from "@/lib/db/scope";
import { WALLET_PROVIDER } from "@/lib/iam/siwe";
import type { PolicyRow } from "@/lib/policies/service";
import type { ProjectContext } from "@/lib/tenant";
import type { EntryPointVersion } from "./op-params";
import { invalidParam } from "./rpc-error";

export interface OperationSender {
  address: Address;
  /** The project's account (acc_ or dac_); null for an outside sender. */
  accountId: string | null;
  /** The player whose account it is, if any: interval rules count per player. */
  playerId: string | null;
  /** The project account's stored type (UpgradeableV5, DelegatedV8…); null when the row is not an account (acc_). */
  accountType: string | null;
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
function factoryOwner(sender: Address, initCode: Hex, version: EntryPointVersion): Address | null {
  const deployment = version === "0.8" ? accountFactoryInitCodeV08(initCode) : accountFactoryInitCode(initCode);
  const address = deployment && (version === "0.8" ? counterfactualAddressV08 : counterfactualAddress)(deployment.owner, deployment.salt, deployment.guardian);
  if (!deployment || !isAddressEqual(address!, sender)) return null;
  return deployment.owner;
}

/**
 * The project's account behind `sender` on the chain: a player's account (deployed or counterfactual), a custodial
 * developer account, or a first operation deploying an account through our factory for an owner the project knows
 * (a player's wallet identity, or the owner of one of its players' accounts). Otherwise the policy must opt in to
 * outside accounts, or UnknownSenderError.
 */
export async function operationSender(
  db: Queryable,
  ctx: ProjectContext,
  chainId: number,
  op: { sender: Address; initCode?: Hex; version?: EntryPointVersion },
  policy: PolicyRow,
): Promise<OperationSender> {
  const address = getAddress(op.sender);
  const version = op.version ?? "0.6";
  const [account] = await db
    .select({ id: accounts.id, playerId: accounts.playerId, accountType: accounts.accountType })
    .from(accounts)
    .where(inScope(accounts, ctx, eq(accounts.chainId, chainId), eq(accounts.address, address)))
    .limit(1);
  if (account) {
    checkAccountEntryPoint(account.accountType, address, version);
    return { address, accountId: account.id, playerId: account.playerId, accountType: account.accountType };
  }

  const [developer] = await db
    .select({ id: developerAccounts.id })
    .from(developerAccounts)
    .where(inScope(developerAccounts, ctx, eq(developerAccounts.custodial, true), eq(developerAccounts.deleted, false), sql`lower(${developerAccounts.address}) = ${address.toLowerCase()}`))
    .limit(1);
  // Developer accounts are v0.6 SmartAccounts.
  if (developer && version === "0.6") return { address, accountId: developer.id, playerId: null, accountType: null };

  const owner = factoryOwner(address, op.initCode ?? "0x", version);
  if (owner) {
    const [identity] = await db
      .select({ playerId: playerIdentities.playerId })
      .from(playerIdentities)
      .where(inScope(playerIdentities, ctx, eq(playerIdentities.provider, WALLET_PROVIDER), eq(playerIdentities.externalUserId, owner.toLowerCase()), eq(playerIdentities.disabled, false)))
      .limit(1);
    const [owned] = identity
      ? [identity]
      : await db.select({ playerId: accounts.playerId }).from(accounts).where(inScope(accounts, ctx, sql`lower(${accounts.ownerAddress}) = ${owner.toLowerCase()}`)).limit(1);
    if (owned) return { address, accountId: null, playerId: owned.playerId, accountType: null };
  }

  if (policy.sponsorOutsideAccounts) return { address, accountId: null, playerId: null, accountType: null };
  throw new UnknownSenderError(address, chainId, policy);
}

/** An op for the EntryPoint its account does not use would fail there (or, worse, be hashed for the wrong one): -32602. */
export function checkAccountEntryPoint(accountType: string, sender: Address, version: EntryPointVersion): void {
  const uses = entryPointVersionOf(accountType);
  if (uses === version) return;
  const { entryPoint, entryPointV08 } = serviceDeployment();
  throw invalidParam(
    `userOperation.sender ${sender} is an account on EntryPoint v${uses} (${uses === "0.8" ? entryPointV08 : entryPoint}): send its operations in that version's shape with that entryPoint, not v${version}'s.`,
    "entryPoint",
  );
}

/**
 * The EIP-7702 side of a v0.8 op: an op that carries an authorization or the 0x7702 marker must come from a
 * Delegated_v08 account, and a Delegated_v08 account's op must leave (or put) its EOA delegating to this service's
 * DelegatedAccountV8. An EOA that someone delegated elsewhere is refused, never silently re-delegated by a sponsored
 * op: only its owner's own authorization for our implementation takes it back. Returns `delegate`, the delegate the
 * op's hash binds when the op repeats the marker without an authorization (the EOA's current one, ours), and
 * `current`, whom the EOA delegates to now (read for Delegated_v08 senders only).
 */
export async function checkDelegation(
  chain: ChainConfig,
  op: UserOpV08,
  accountType: string | null,
): Promise<{ delegate?: Address; current: Address | null }> {
  const ours = serviceDeployment().delegatedAccountV08;
  const marker = isEip7702Factory(op.factory);
  if (!accountType || !isDelegatedType(accountType)) {
    if (op.authorization || marker) {
      throw invalidParam(
        `userOperation.sender ${op.sender} is not a Delegated_v08 account of this project: only those (POST /v1/accounts with accountType DelegatedV8) send EIP-7702 operations here.`,
        op.authorization ? "userOperation.eip7702Auth" : "userOperation.factory",
      );
    }
    return { current: null };
  }
  const auth = op.authorization;
  if (auth) {
    if (!marker) throw invalidParam("userOperation.eip7702Auth needs factory 0x7702 (the EntryPoint hashes the delegate in its place).", "userOperation.factory");
    if (!isAddressEqual(auth.address, ours)) {
      throw invalidParam(
        `userOperation.eip7702Auth delegates ${op.sender} to ${getAddress(auth.address)}: Delegated_v08 accounts delegate to this service's DelegatedAccountV8 ${ours}.`,
        "userOperation.eip7702Auth",
      );
    }
    if (auth.chainId !== 0 && auth.chainId !== chain.chainId) {
      throw invalidParam(`userOperation.eip7702Auth is for chain ${auth.chainId}, not ${chain.chainId}.`, "userOperation.eip7702Auth");
    }
  }
  if (op.factory && !marker) throw invalidParam(`userOperation.sender ${op.sender} is an EOA (Delegated_v08): it has no factory; its first operation carries factory 0x7702 and eip7702Auth.`, "userOperation.factory");
  const { delegate } = await onChain(chain, () => delegationOf(chain, op.sender));
  if (auth) return { current: delegate };
  if (!delegate) {
    throw invalidParam(
      `Account ${op.sender} does not delegate to ${ours} yet: its first operation must carry its owner's EIP-7702 authorization for ${ours} (eip7702Auth, factory 0x7702).`,
      "userOperation.eip7702Auth",
    );
  }
  if (!isAddressEqual(delegate, ours)) {
    throw invalidParam(
      `Account ${op.sender} delegates to ${getAddress(delegate)}, not to this service's DelegatedAccountV8 ${ours}: its delegation was changed outside this service, which does not re-delegate it. Its owner can delegate it back with an EIP-7702 authorization for ${ours} (eip7702Auth).`,
      "userOperation.sender",
    );
  }
  return { current: delegate, ...(marker && { delegate }) };
}
