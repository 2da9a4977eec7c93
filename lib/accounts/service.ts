import { and, eq, ilike, or } from "drizzle-orm";
import { getAddress, hashTypedData, serializeErc6492Signature, type Address, type Hex, type TypedDataDefinition } from "viem";
import { accountAddressOf, accountMessageDigest, accountSalt, deploymentOf, readAccountState } from "@/lib/chain/accounts";
import { onChain, publicClient } from "@/lib/chain/clients";
import { chainEntryPoints, chainFor, type ChainConfig } from "@/lib/chain/registry";
import { tokenBoundMessageDigest } from "@/lib/chain/token-bound";
import type { Queryable } from "@/lib/db/client";
import { accounts } from "@/lib/db/schema";
import { inScope } from "@/lib/db/scope";
import { badRequest, conflict, notFound } from "@/lib/errors";
import { listPage } from "@/lib/http/list";
import { newId } from "@/lib/ids";
import { findOwnerKey, ownerKeyFor, ownerSigner } from "@/lib/keys/custodial";
import { createPlayer, getPlayer, likePattern } from "@/lib/players/service";
import type { ProjectContext } from "@/lib/tenant";
import { checkToken, currentHolder, custodialKeyOf, signingOwner, tokenBoundSigner } from "./token-bound";
import { delegationOf } from "@/lib/chain/eip7702";
import { refreshDelegation } from "./delegation";
import { accountTypeInfo, entryPointVersionOf, isDelegatedType, parseAccountType, type AccountType } from "@/lib/account-records/types";
import { type CreateAccountInput, type ListAccountsInput, type SignPayloadInput } from "./schema";

export type AccountRow = typeof accounts.$inferSelect;

function checkAccountType(input: CreateAccountInput): AccountType {
  const type = parseAccountType(input.accountType);
  if (input.defaultGuardian && !accountTypeInfo(type)?.guardian) {
    throw badRequest(`defaultGuardian does not apply to accountType ${type}: it has no guardians.`, {
      defaultGuardian: { value: input.defaultGuardian, message: `not with accountType ${type}` },
    });
  }
  if (type === "ERC6551V1") {
    if (input.externalOwnerAddress !== undefined) {
      throw badRequest("externalOwnerAddress does not apply to ERC6551V1 accounts: whoever holds the token controls the account.", {
        externalOwnerAddress: { value: input.externalOwnerAddress, message: "not with accountType ERC6551V1" },
      });
    }
    return type;
  }
  for (const field of ["tokenContract", "tokenId"] as const) {
    if (input[field] !== undefined) {
      throw badRequest(`${field} applies to ERC-6551 accounts only; accountType ${type} does not take it.`, {
        [field]: { value: input[field], message: "only for ERC6551 accounts" },
      });
    }
  }
  return type;
}

/**
 * A counterfactual account for the player on the chain (the player is created when not given).
 * Custodial unless `externalOwnerAddress` names the owner. One account per player and chain:
 * the unique index decides between concurrent requests.
 */
export async function createAccount(db: Queryable, ctx: ProjectContext, input: CreateAccountInput): Promise<AccountRow> {
  const chain = chainFor(ctx, input.chainId);
  const accountType = checkAccountType(input);
  const version = entryPointVersionOf(accountType);
  if (!chainEntryPoints(chain).includes(version)) {
    const offered = chainEntryPoints(chain).join(", ");
    throw badRequest(`accountType ${accountType} runs on EntryPoint v${version}, which chain ${chain.chainId} does not offer (it offers ${offered}).`, {
      accountType: { value: input.accountType, message: `chain ${chain.chainId} offers EntryPoint ${offered}` },
    });
  }
  // ERC6551V1: the token is checked on chain first; its holder is the owner, custodial when it is the player's key.
  const token = accountType === "ERC6551V1" ? await checkToken(db, ctx, chain, input) : null;
  const delegated = isDelegatedType(accountType);
  // An owner's EOA may delegate somewhere already (ours, or not): recorded as found, reported on the account.
  const existingDelegation = delegated && input.externalOwnerAddress ? await onChain(chain, () => delegationOf(chain, input.externalOwnerAddress!)) : null;
  return db.transaction(async (tx) => {
    const player = input.player ? await getPlayer(tx, ctx, input.player) : await createPlayer(tx, ctx, {});
    const custodial = token ? (await custodialKeyOf(tx, player.id, token.holder)) !== undefined : input.externalOwnerAddress === undefined;
    const owner = token?.holder ?? input.externalOwnerAddress ?? (await ownerKeyFor(tx, ctx, player.id)).address;
    const tokenContract = token?.tokenContract ?? null;
    const tokenId = token?.tokenId ?? null;
    const salt = accountSalt(player.id);
    const defaultGuardian = input.defaultGuardian ?? false;
    const address = accountAddressOf({ ...ctx, accountType, chainId: input.chainId, ownerAddress: owner, salt, defaultGuardian, tokenContract, tokenId });
    // A delegated account is its owner's EOA: one EOA is one account of the project per chain.
    if (delegated) {
      const [taken] = await tx.select({ id: accounts.id }).from(accounts).where(inScope(accounts, ctx, eq(accounts.chainId, input.chainId), eq(accounts.address, address)));
      if (taken) throw conflict(`${address} is already account ${taken.id} on chain ${input.chainId}: a delegated account is its owner's EOA, so one EOA is one account.`);
    }
    const delegatedTo = existingDelegation?.delegate ? getAddress(existingDelegation.delegate) : existingDelegation?.hasCode ? address : null;
    const [row] = await tx
      .insert(accounts)
      .values({
        id: newId("account"),
        ...ctx,
        playerId: player.id,
        chainId: input.chainId,
        // With defaultGuardian the factory deploys it with the service as guardian: another address (see AccountFactory).
        address,
        ownerAddress: owner,
        custodial,
        accountType,
        salt,
        defaultGuardian,
        tokenContract,
        tokenId,
        delegatedTo,
      })
      .onConflictDoNothing({ target: [accounts.playerId, accounts.chainId] })
      .returning();
    if (!row) {
      const [existing] = await tx.select({ id: accounts.id }).from(accounts).where(and(eq(accounts.playerId, player.id), eq(accounts.chainId, input.chainId)));
      throw conflict(`Player ${player.id} already has an account on chain ${input.chainId}${existing ? ` (${existing.id})` : ""}; a player has at most one account per chain.`);
    }
    return row;
  });
}

export async function getAccount(db: Queryable, ctx: ProjectContext, id: string): Promise<AccountRow> {
  const [row] = await db.select().from(accounts).where(inScope(accounts, ctx, eq(accounts.id, id)));
  if (!row) throw notFound("account", id);
  return row;
}

export async function listAccounts(db: Queryable, ctx: ProjectContext, input: ListAccountsInput) {
  await getPlayer(db, ctx, input.player);
  return listPage(db, accounts, inScope(accounts, ctx, eq(accounts.playerId, input.player)), input);
}

/** Refreshes deployment, owner and pending owner from the chain. */
export async function syncAccount(db: Queryable, ctx: ProjectContext, id: string): Promise<AccountRow> {
  const account = await getAccount(db, ctx, id);
  const chain = chainFor(ctx, account.chainId);
  if (account.accountType === "ERC6551V1") return syncTokenBound(db, chain, account);
  // An EOA owns itself: what can change is whom it delegates to.
  if (isDelegatedType(account.accountType)) return refreshDelegation(db, chain, account);
  const state = await onChain(chain, () => readAccountState(chain, account.address as Address));
  const ownerAddress = state.owner ?? account.ownerAddress;
  // Custodial means we hold the key of the current owner: an owner changed on chain ends that.
  const ownerKey = await findOwnerKey(db, account.playerId);
  const custodial = ownerKey !== undefined && getAddress(ownerKey.address) === getAddress(ownerAddress);
  const [row] = await db
    .update(accounts)
    .set({ deployed: state.deployed, ownerAddress, pendingOwnerAddress: state.pendingOwner, custodial, updatedAt: new Date() })
    .where(eq(accounts.id, account.id))
    .returning();
  return row!;
}

/** A token-bound account's controller is the token's holder now (kept when the token is gone, then not custodial). */
async function syncTokenBound(db: Queryable, chain: ChainConfig, account: AccountRow): Promise<AccountRow> {
  const [code, holder] = await Promise.all([onChain(chain, () => publicClient(chain).getCode({ address: account.address as Address })), currentHolder(chain, account)]);
  const custodial = (await custodialKeyOf(db, account.playerId, holder)) !== undefined;
  const [row] = await db
    .update(accounts)
    .set({ deployed: code !== undefined && code !== "0x", ownerAddress: holder ?? account.ownerAddress, custodial, updatedAt: new Date() })
    .where(eq(accounts.id, account.id))
    .returning();
  return row!;
}

/** The row's flag, or the chain's answer while the row still says counterfactual. */
async function isDeployed(ctx: ProjectContext, account: AccountRow): Promise<boolean> {
  if (account.deployed) return true;
  const chain = chainFor(ctx, account.chainId);
  const code = await onChain(chain, () => publicClient(chain).getCode({ address: account.address as Address }));
  return code !== undefined && code !== "0x";
}

function typedDataHash(input: SignPayloadInput): Hex {
  const { EIP712Domain: _declaredDomain, ...types } = input.types;
  try {
    return hashTypedData({ domain: input.domain, types, primaryType: input.primaryType, message: input.value } as unknown as TypedDataDefinition);
  } catch (err) {
    const reason = err instanceof Error ? (err as { shortMessage?: string }).shortMessage ?? err.message.split("\n")[0] : "invalid";
    throw badRequest(`The typed data cannot be hashed under EIP-712: ${reason}`, {
      types: { message: reason ?? "invalid typed data" },
    });
  }
}

/**
 * Signs EIP-712 typed data for a custodial account so that the account's `isValidSignature`
 * accepts it. Before deployment the signature is ERC-6492-wrapped with the factory call, which
 * verifiers (viem's verifyTypedData, for one) understand.
 */
export async function signPayload(db: Queryable, ctx: ProjectContext, id: string, input: SignPayloadInput) {
  const account = await getAccount(db, ctx, id);
  // A token-bound account is custodial while the token's holder is the player's key: asked of the chain now.
  const tokenBound = account.accountType === "ERC6551V1";
  const tokenKey = tokenBound ? await tokenBoundSigner(db, account) : undefined;
  if (tokenBound ? !tokenKey : !account.custodial) {
    const who = tokenBound ? `the holder of its token (${await signingOwner(account)})` : `its owner ${account.ownerAddress}`;
    throw badRequest(`Account ${account.id} is not custodial: ${who} signs for it, not this service.`);
  }
  const hash = typedDataHash(input);
  if (input.hash !== undefined && input.hash.toLowerCase() !== hash) {
    throw badRequest(`hash does not match the EIP-712 hash of the typed data (${hash}).`, { hash: { value: input.hash, message: `expected ${hash}` } });
  }
  const ownerKey = tokenKey ?? (await findOwnerKey(db, account.playerId));
  if (!ownerKey) throw new Error(`custodial account ${account.id} has no owner key`);
  const signer = ownerSigner(ownerKey);
  // DelegatedAccountV8 checks the EOA's own signature of the hash (what an EOA's signature means anyway).
  const delegated = isDelegatedType(account.accountType);
  const digest = delegated ? hash : (tokenBound ? tokenBoundMessageDigest : accountMessageDigest)(account.chainId, account.address as Address, hash);
  const ownerSignature = await signer.sign({ hash: digest });
  let signature: Hex = ownerSignature;
  if (!delegated && !(await isDeployed(ctx, account))) {
    const { factory, data } = deploymentOf(account);
    signature = serializeErc6492Signature({ address: factory, data, signature: ownerSignature });
  }
  return { object: "signature" as const, account: account.id, address: account.address, hash, signature };
}

/** The dashboard's search: accounts whose id, address, owner or player id contains the text, optionally on one chain. */
export async function searchAccounts(db: Queryable, ctx: ProjectContext, input: { q?: string; chainId?: number; limit: number; skip: number }) {
  const q = input.q?.trim();
  const pattern = q ? likePattern(q) : undefined;
  const matches = pattern ? or(ilike(accounts.id, pattern), ilike(accounts.address, pattern), ilike(accounts.ownerAddress, pattern), ilike(accounts.playerId, pattern)) : undefined;
  return listPage(db, accounts, inScope(accounts, ctx, matches, input.chainId === undefined ? undefined : eq(accounts.chainId, input.chainId)), input);
}
