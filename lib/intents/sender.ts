// Who sends an intent's operation: a player's account or a custodial developer account, resolved from the request.
import { and, eq, sql } from "drizzle-orm";
import { isAddressEqual, type Address, type Hex } from "viem";
import type { KeyAccount } from "@/lib/keys/key-account";
import { createAccount, type AccountRow } from "@/lib/accounts/service";
import { tokenBoundSigner } from "@/lib/accounts/token-bound";
import type { DeployableAccount } from "@/lib/chain/accounts";
import type { Queryable } from "@/lib/db/client";
import { preparedQuery } from "@/lib/db/prepared-query";
import { accounts, ownerKeys, players, transactionIntents } from "@/lib/db/schema";
import { inScope } from "@/lib/db/scope";
import { developerSigner, getDeveloperAccount, type DeveloperAccountRow } from "@/lib/developer-accounts/service";
import { ApiError, badRequest, missingReference, referenced } from "@/lib/errors";
import { findOwnerKey, ownerSigner, type OwnerKeyRow } from "@/lib/keys/custodial";
import { createPlayer } from "@/lib/players/service";
import type { ProjectContext } from "@/lib/tenant";
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
  signer: KeyAccount | null;
  /** Whether a live intent deploys the account, when read with it (resolveSender); unset: not known, ask liveDeployer. */
  deployerLive?: boolean;
}

/** The account as an intent's sender; `known`: its player's owner key as read with it already (null: none). */
export async function playerSender(db: Queryable, account: AccountRow, known?: { ownerKey: OwnerKeyRow | null }): Promise<IntentSender> {
  // Token-bound: the service signs only while the token's holder is the player's key (control follows the token).
  const ownerKey =
    account.accountType === "ERC6551V1"
      ? await tokenBoundSigner(db, account)
      : account.custodial
        ? known
          ? (known.ownerKey ?? undefined)
          : await findOwnerKey(db, account.playerId)
        : undefined;
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
  const { account, ownerKey, deployerLive } = await accountOf(db, ctx, input);
  const sender = await playerSender(db, account, ownerKey === undefined ? undefined : { ownerKey });
  return deployerLive === undefined ? sender : { ...sender, deployerLive };
}

/** The account named, or the player's on the chain (created when missing, owned by externalOwnerAddress when given). */
export async function resolveAccount(
  db: Queryable,
  ctx: ProjectContext,
  input: Pick<CreateIntentInput, "account" | "player" | "chainId" | "externalOwnerAddress">,
): Promise<AccountRow> {
  return (await accountOf(db, ctx, input)).account;
}

/** Whether a live (awaiting signature or pending) intent deploys the joined account (lib/intents/deployer.ts liveDeployer). */
const deployerLiveSql = sql<boolean>`exists (select 1 from ${transactionIntents} where ${transactionIntents.chainId} = ${accounts.chainId} and ${transactionIntents.accountId} = ${accounts.id} and ${transactionIntents.deploysAccount} and ${transactionIntents.status} in ('awaiting_signature', 'pending'))`;
const scope = { projectId: sql.placeholder("projectId"), livemode: sql.placeholder("livemode") };

/** A player (not deleted) with its account on a chain, its owner key and whether an intent deploys that account: one statement. */
const playerAccount = preparedQuery("intent_player_account", (q) =>
  q
    .select({ playerId: players.id, account: accounts, ownerKey: ownerKeys, deployerLive: deployerLiveSql })
    .from(players)
    .leftJoin(accounts, and(eq(accounts.playerId, players.id), eq(accounts.chainId, sql.placeholder("chainId"))))
    .leftJoin(ownerKeys, eq(ownerKeys.playerId, players.id))
    .where(inScope(players, scope, sql`${players.deletedAt} is null`, eq(players.id, sql.placeholder("id")))),
);

/** An account by id with its player's owner key and whether an intent deploys it: one statement. */
const accountById = preparedQuery("intent_account", (q) =>
  q
    .select({ account: accounts, ownerKey: ownerKeys, deployerLive: deployerLiveSql })
    .from(accounts)
    .leftJoin(ownerKeys, eq(ownerKeys.playerId, accounts.playerId))
    .where(inScope(accounts, scope, eq(accounts.id, sql.placeholder("id")))),
);

/**
 * resolveAccount's account, with what an intent needs of it read in the same statement when it exists: its player's
 * owner key and whether a live intent deploys it (both undefined for an account created here).
 */
async function accountOf(
  db: Queryable,
  ctx: ProjectContext,
  input: Pick<CreateIntentInput, "account" | "player" | "chainId" | "externalOwnerAddress">,
): Promise<{ account: AccountRow; ownerKey?: OwnerKeyRow | null; deployerLive?: boolean }> {
  if (input.account) {
    const [found] = await accountById(db, { projectId: ctx.projectId, livemode: ctx.livemode, id: input.account });
    if (!found) throw missingReference("account", input.account);
    const { account } = found;
    if (account.chainId !== input.chainId) {
      throw badRequest(`Account ${account.id} is on chain ${account.chainId}, not ${input.chainId}.`, { account: { value: account.id, message: `on chain ${account.chainId}` } });
    }
    if (input.player && input.player !== account.playerId) {
      throw badRequest(`Account ${account.id} belongs to player ${account.playerId}, not ${input.player}.`, { player: { value: input.player, message: "not the account's player" } });
    }
    return found;
  }
  let playerId: string;
  if (input.player) {
    const [found] = await playerAccount(db, { projectId: ctx.projectId, livemode: ctx.livemode, id: input.player, chainId: input.chainId });
    if (!found) throw missingReference("player", input.player);
    const existing = found.account;
    if (existing) {
      if (input.externalOwnerAddress && !isAddressEqual(existing.ownerAddress as Address, input.externalOwnerAddress)) {
        throw badRequest(`Player ${found.playerId} already has account ${existing.id} on chain ${input.chainId}, owned by ${existing.ownerAddress}.`, {
          externalOwnerAddress: { value: input.externalOwnerAddress, message: "differs from the existing account's owner" },
        });
      }
      return { account: existing, ownerKey: found.ownerKey, deployerLive: found.deployerLive };
    }
    playerId = found.playerId;
  } else {
    playerId = (await createPlayer(db, ctx, {})).id;
  }
  try {
    return { account: await createAccount(db, ctx, { chainId: input.chainId, player: playerId, externalOwnerAddress: input.externalOwnerAddress }) };
  } catch (err) {
    // A concurrent intent created it first.
    if (!(err instanceof ApiError && err.status === 409)) throw err;
    const [raced] = await db.select().from(accounts).where(and(eq(accounts.playerId, playerId), eq(accounts.chainId, input.chainId)));
    return { account: raced! };
  }
}
