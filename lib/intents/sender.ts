// Who sends an intent's operation: a player's account or a custodial developer account, resolved from the request.
import { and, eq } from "drizzle-orm";
import { isAddressEqual, type Address, type Hex } from "viem";
import type { PrivateKeyAccount } from "viem/accounts";
import { createAccount, getAccount, type AccountRow } from "@/lib/accounts/service";
import { tokenBoundSigner } from "@/lib/accounts/token-bound";
import type { DeployableAccount } from "@/lib/chain/accounts";
import type { Queryable } from "@/lib/db/client";
import { accounts } from "@/lib/db/schema";
import { developerSigner, getDeveloperAccount, type DeveloperAccountRow } from "@/lib/developer-accounts/service";
import { ApiError, badRequest, referenced } from "@/lib/http/errors";
import { findOwnerKey, ownerSigner } from "@/lib/keys/custodial";
import { createPlayer, getPlayer } from "@/lib/players/service";
import type { ProjectContext } from "@/lib/projects/service";
import type { CreateIntentInput } from "./schema";

/**
 * Who sends an intent's operation: a player's account (acc_) or a custodial developer account
 * (dac_). `signer` is the owner key the service holds, or null when the owner signs (sign_with_wallet).
 */
export interface IntentSender extends DeployableAccount {
  id: string;
  chainId: number;
  playerId: string | null;
  address: Address;
  ownerAddress: Address;
  salt: Hex;
  deployed: boolean;
  signer: PrivateKeyAccount | null;
}

export async function playerSender(db: Queryable, account: AccountRow): Promise<IntentSender> {
  // Token-bound: the service signs only while the token's holder is the player's key (control follows the token).
  const ownerKey =
    account.accountType === "ERC6551V1" ? await tokenBoundSigner(db, account) : account.custodial ? await findOwnerKey(db, account.playerId) : undefined;
  return {
    id: account.id,
    projectId: account.projectId,
    accountType: account.accountType,
    chainId: account.chainId,
    playerId: account.playerId,
    address: account.address as Address,
    ownerAddress: account.ownerAddress as Address,
    salt: account.salt as Hex,
    deployed: account.deployed,
    defaultGuardian: account.defaultGuardian,
    tokenContract: account.tokenContract,
    tokenId: account.tokenId,
    signer: ownerKey ? ownerSigner(ownerKey) : null,
  };
}

/** A custodial developer account as the sender on a chain (deployed with its first operation there). */
export function developerSender(account: DeveloperAccountRow, chainId: number, param = "account"): IntentSender {
  if (account.deleted || !account.custodial) {
    const why = account.deleted ? "is deleted" : "is an external wallet: only custodial developer accounts send transaction intents";
    throw badRequest(`Developer account ${account.id} ${why}.`, { [param]: { value: account.id, message: why } });
  }
  return {
    id: account.id,
    projectId: account.projectId,
    accountType: "UpgradeableV5",
    chainId,
    playerId: null,
    address: account.address as Address,
    ownerAddress: account.ownerAddress as Address,
    salt: account.salt as Hex,
    deployed: false,
    defaultGuardian: false,
    tokenContract: null,
    tokenId: null,
    signer: developerSigner(account),
  };
}

/** The intent's sender: the account named, or the player's account on the chain (created when missing). */
export async function resolveSender(db: Queryable, ctx: ProjectContext, input: CreateIntentInput): Promise<IntentSender> {
  if (input.account?.startsWith("dac_")) {
    if (input.player || input.externalOwnerAddress) {
      throw badRequest("A developer account's intent has no player: omit player and externalOwnerAddress.", {
        [input.player ? "player" : "externalOwnerAddress"]: { message: "not with a developer account" },
      });
    }
    return developerSender(await referenced(getDeveloperAccount(db, ctx, input.account), "account", input.account), input.chainId);
  }
  return playerSender(db, await resolveAccount(db, ctx, input));
}

/** The account named, or the player's on the chain (created when missing, owned by externalOwnerAddress when given). */
export async function resolveAccount(
  db: Queryable,
  ctx: ProjectContext,
  input: Pick<CreateIntentInput, "account" | "player" | "chainId" | "externalOwnerAddress">,
): Promise<AccountRow> {
  if (input.account) {
    const account = await referenced(getAccount(db, ctx, input.account), "account", input.account);
    if (account.chainId !== input.chainId) {
      throw badRequest(`Account ${account.id} is on chain ${account.chainId}, not ${input.chainId}.`, { account: { value: account.id, message: `on chain ${account.chainId}` } });
    }
    if (input.player && input.player !== account.playerId) {
      throw badRequest(`Account ${account.id} belongs to player ${account.playerId}, not ${input.player}.`, { player: { value: input.player, message: "not the account's player" } });
    }
    return account;
  }
  const player = input.player ? await referenced(getPlayer(db, ctx, input.player), "player", input.player) : await createPlayer(db, ctx, {});
  const [existing] = await db.select().from(accounts).where(and(eq(accounts.playerId, player.id), eq(accounts.chainId, input.chainId)));
  if (existing) {
    if (input.externalOwnerAddress && !isAddressEqual(existing.ownerAddress as Address, input.externalOwnerAddress)) {
      throw badRequest(`Player ${player.id} already has account ${existing.id} on chain ${input.chainId}, owned by ${existing.ownerAddress}.`, {
        externalOwnerAddress: { value: input.externalOwnerAddress, message: "differs from the existing account's owner" },
      });
    }
    return existing;
  }
  try {
    return await createAccount(db, ctx, { chainId: input.chainId, player: player.id, externalOwnerAddress: input.externalOwnerAddress });
  } catch (err) {
    // A concurrent intent created it first.
    if (!(err instanceof ApiError && err.status === 409)) throw err;
    const [raced] = await db.select().from(accounts).where(and(eq(accounts.playerId, player.id), eq(accounts.chainId, input.chainId)));
    return raced!;
  }
}
