import crypto from "node:crypto";
import { and, eq, inArray, lte, sql, type SQL } from "drizzle-orm";
import { encodeFunctionData, getAddress, isAddressEqual, toHex, type Abi, type Address, type Hex } from "viem";
import type { PrivateKeyAccount } from "viem/accounts";
import { createAccount, getAccount, type AccountRow } from "@/lib/accounts/service";
import { tokenBoundSigner } from "@/lib/accounts/token-bound";
import { deploymentOf, type DeployableAccount } from "@/lib/chain/accounts";
import { requireDeployment } from "@/lib/chain/contracts";
import { publicClient } from "@/lib/chain/clients";
import { chainFor, type ChainConfig } from "@/lib/chain/registry";
import {
  encodeAccountCalls,
  estimateUserOperation,
  preVerificationGas,
  requiredPrefund,
  signUserOperation,
  userOperationHash,
  UserOperationRejectedError,
  type AccountCall,
  type UserOp,
} from "@/lib/chain/userop";
import { coerceArguments, resolveIdArguments, selectFunction } from "@/lib/contracts/arguments";
import { activeContractOn } from "@/lib/contracts/service";
import type { Queryable, Tx } from "@/lib/db/client";
import { accounts, transactionIntents } from "@/lib/db/schema";
import { ApiError, badRequest, notFound, referenced } from "@/lib/http/errors";
import { listPage } from "@/lib/http/list";
import { newId } from "@/lib/ids";
import { developerSigner, getDeveloperAccount, type DeveloperAccountRow } from "@/lib/developer-accounts/service";
import { findOwnerKey, ownerSigner } from "@/lib/keys/custodial";
import { createPlayer, getPlayer } from "@/lib/players/service";
import { evaluateSponsorship, type RuledCall } from "@/lib/policies/evaluate";
import { rulesOfPolicies, type PolicyRuleRow } from "@/lib/policies/rules";
import { getPolicy, type PolicyRow } from "@/lib/policies/service";
import { planTokenCharge, transferCall } from "@/lib/policies/tokens";
import type { ProjectContext } from "@/lib/projects/service";
import type { CreateIntentInput, InteractionInput, ListIntentsInput } from "./schema";
import { claimDeployment, DEPLOYER_INDEX, liveDeployer, violates } from "./deployer";
import { serializeIntent } from "./serializer";
import { sessionSigning } from "./session-keys";
import { currentRequestId } from "@/lib/http/request-context";
import { sponsorOf } from "@/lib/paymasters/sponsor";

export type IntentRow = typeof transactionIntents.$inferSelect;

export { SPONSORSHIP_SECONDS } from "@/lib/paymasters/sponsor";

export const scoped = (ctx: ProjectContext, ...conditions: (SQL | undefined)[]) =>
  and(eq(transactionIntents.projectId, ctx.projectId), eq(transactionIntents.livemode, ctx.livemode), ...conditions);

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
async function resolveSender(db: Queryable, ctx: ProjectContext, input: CreateIntentInput): Promise<IntentSender> {
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

interface ResolvedCall extends AccountCall {
  ruled: RuledCall;
}

async function resolveInteraction(db: Queryable, ctx: ProjectContext, account: IntentSender, item: InteractionInput, i: number): Promise<ResolvedCall> {
  const at = (field: string) => `interactions[${i}][${field}]`;
  const value = BigInt(item.value ?? "0");
  if (item.contract !== undefined) {
    if (item.to !== undefined || item.data !== undefined) {
      throw badRequest("An interaction names either a contract (with functionName) or a raw to/data, not both.", { [at("to")]: { message: "not with contract" } });
    }
    const contract = await activeContractOn(db, ctx, item.contract, account.chainId, at("contract"));
    if (item.functionName === undefined) throw badRequest(`${at("functionName")} is required with a contract.`, { [at("functionName")]: { message: "required" } });
    const rawArgs = item.functionArgs ?? [];
    const fn = selectFunction(contract.abi, item.functionName, rawArgs.length, at("functionName"));
    // String arguments may be pla_/acc_/con_ ids; JSON values (numbers, arrays, objects) are taken as they are.
    const resolved = await resolveIdArguments(db, ctx, account.chainId, rawArgs.map((a) => (typeof a === "string" ? a : "")), at("functionArgs"));
    const args = coerceArguments(fn, rawArgs.map((a, k) => (typeof a === "string" ? resolved[k] : a)), at("functionArgs"));
    const data = encodeFunctionData({ abi: [fn] as Abi, functionName: fn.name, args });
    const to = getAddress(contract.address);
    return { to, value, data, ruled: { contractId: contract.id, to, functionName: fn.name, self: isAddressEqual(to, account.address) } };
  }
  if (item.to === undefined) {
    throw badRequest("An interaction needs a contract (con_...) with functionName, or a raw to address.", { [at("contract")]: { message: "required unless to is given" } });
  }
  if (item.functionName !== undefined || item.functionArgs !== undefined) {
    throw badRequest("functionName and functionArgs need a registered contract; with a raw to, send data.", { [at("functionName")]: { message: "needs contract" } });
  }
  const to = item.to as Address;
  return { to, value, data: (item.data ?? "0x") as Hex, ruled: { contractId: null, to, functionName: null, self: isAddressEqual(to, account.address) } };
}

/** A random 2D nonce key: concurrent intents of one account never wait for or collide with each other. */
const freshNonceKey = () => BigInt(toHex(crypto.randomBytes(24)));

export const serializeUserOp = (op: UserOp): Record<string, string> => ({
  sender: op.sender,
  nonce: toHex(op.nonce),
  initCode: op.initCode ?? "0x",
  callData: op.callData,
  callGasLimit: toHex(op.callGasLimit),
  verificationGasLimit: toHex(op.verificationGasLimit),
  preVerificationGas: toHex(op.preVerificationGas),
  maxFeePerGas: toHex(op.maxFeePerGas),
  maxPriorityFeePerGas: toHex(op.maxPriorityFeePerGas),
  paymasterAndData: op.paymasterAndData ?? "0x",
  signature: op.signature,
});

export const deserializeUserOp = (op: Record<string, string>): UserOp => ({
  sender: op.sender as Address,
  nonce: BigInt(op.nonce!),
  initCode: op.initCode as Hex,
  callData: op.callData as Hex,
  callGasLimit: BigInt(op.callGasLimit!),
  verificationGasLimit: BigInt(op.verificationGasLimit!),
  preVerificationGas: BigInt(op.preVerificationGas!),
  maxFeePerGas: BigInt(op.maxFeePerGas!),
  maxPriorityFeePerGas: BigInt(op.maxPriorityFeePerGas!),
  paymasterAndData: op.paymasterAndData as Hex,
  signature: op.signature as Hex,
});

export async function loadPolicy(db: Queryable, ctx: ProjectContext, id: string | undefined): Promise<Sponsor | null> {
  if (id === undefined) return null;
  const policy = await referenced(getPolicy(db, ctx, id), "policy", id);
  return { policy, rules: (await rulesOfPolicies(db, ctx, [policy.id])).get(policy.id) ?? [], evaluate: true };
}

/**
 * Creates a transaction intent: resolves account and calls, builds the userOperation with real
 * gas estimates, decides sponsorship under the policy (in the same transaction that records the
 * intent, so limits hold under concurrency), signs it when custodial. Nothing is sent here.
 */
export async function createIntent(db: Queryable, ctx: ProjectContext, input: CreateIntentInput): Promise<{ intent: IntentRow; chain: ChainConfig }> {
  const chain = chainFor(ctx, input.chainId);
  const sponsor = await loadPolicy(db, ctx, input.policy);
  await requireDeployment(chain);
  // With `session`, the session's key signs (not the service, even for a custodial account).
  const session = input.session ? await sessionSigning(db, ctx, chain, { ...input, session: input.session }) : null;
  const sender = await resolveSender(db, ctx, session ? { ...input, account: session.accountId } : input);
  const calls = await Promise.all(input.interactions.map((item, i) => resolveInteraction(db, ctx, sender, item, i)));
  const intent = await recordIntent(db, ctx, chain, session ? { ...sender, signer: null } : sender, {
    calls,
    ruled: calls.map((c) => c.ruled),
    sponsor,
    interactions: input.interactions.map((item) => ({ ...item, value: item.value ?? "0" })),
    optimistic: input.optimistic ?? false,
    confirmationBlocks: input.confirmationBlocks ?? 5,
    ...(session && { sessionId: session.sessionId, check: session.check }),
  });
  return { intent, chain };
}

/**
 * A sponsored operation that only deploys the account (and makes the service its guardian when
 * asked at creation): a call to the account itself, so the policy needs an account_functions rule.
 */
export async function createDeploymentIntent(db: Queryable, ctx: ProjectContext, accountId: string, policyId: string): Promise<IntentRow | null> {
  const account = await getAccount(db, ctx, accountId);
  const chain = chainFor(ctx, account.chainId);
  // Whether the service holds the signing key now (for a token-bound account: the token's current holder).
  const sender = await playerSender(db, account);
  if (!sender.signer) {
    throw badRequest(`Account ${account.id} is not custodial: its owner must sign its deployment. Create a transaction intent for it and sign its userOperationHash.`);
  }
  const sponsor = await loadPolicy(db, ctx, policyId);
  await requireDeployment(chain);
  if ((await publicClient(chain).getCode({ address: account.address as Address })) !== undefined) return null;
  // An intent already deploys it (a first transaction sent just before): that one is the deployment.
  const deploying = await liveDeployer(db, chain.chainId, account.id);
  if (deploying) return deploying;
  return recordIntent(db, ctx, chain, sender, {
    calls: [],
    ruled: [{ contractId: null, to: account.address as Address, functionName: null, self: true }],
    sponsor,
    interactions: [],
    optimistic: false,
    confirmationBlocks: 5,
  });
}

/** Who pays the gas: the policy, after its rules allow the intent (`evaluate`), or as the project's own withdrawal. */
interface Sponsor {
  policy: PolicyRow;
  rules: PolicyRuleRow[];
  evaluate: boolean;
}

export interface IntentPlan {
  calls: AccountCall[];
  ruled: RuledCall[];
  sponsor: Sponsor | null;
  interactions: Record<string, unknown>[];
  optimistic: boolean;
  confirmationBlocks: number;
  /** The account's callData as it is, instead of `calls` wrapped in execute/executeBatch (guardian-signed recovery). */
  callData?: Hex;
  /** A policy withdrawal's token amount. */
  tokenWithdrawal?: bigint;
  /** The session (ses_) the intent registers or revokes, or whose key is to sign it. */
  sessionId?: string;
  /** Runs in the transaction that records the intent, to refuse it under a lock (e.g. over-withdrawal). */
  check?: (tx: Tx, op: UserOp) => Promise<void>;
}

/**
 * Builds the userOperation with real gas, decides sponsorship under the policy in the same
 * transaction that records the intent (so limits hold under concurrency), and signs it when
 * custodial. Nothing is sent here.
 */
export async function recordIntent(db: Queryable, ctx: ProjectContext, chain: ChainConfig, sender: IntentSender, plan: IntentPlan): Promise<IntentRow> {
  if (sender.deployed) return buildAndRecord(db, ctx, chain, sender, plan, false);
  // Concurrent first intents of an undeployed account: one deploys it, the others run after it (see DEPLOYER_INDEX).
  const release = claimDeployment(chain.chainId, sender.id);
  try {
    const claimed = release !== null;
    const deploying = claimed && !(await liveDeployer(db, chain.chainId, sender.id));
    try {
      return await buildAndRecord(db, ctx, chain, sender, plan, deploying);
    } catch (err) {
      // Another process's intent claimed the deployment meanwhile, or the account got deployed since we looked.
      const lost = violates(err, DEPLOYER_INDEX) || (err instanceof UserOperationRejectedError && err.code === "AA10");
      if (deploying && lost) return await buildAndRecord(db, ctx, chain, sender, plan, false);
      throw err;
    }
  } finally {
    release?.();
  }
}

/**
 * Builds and records the intent. `deploying`: for an undeployed account, this intent's op carries the initCode;
 * otherwise it is built to run after the op that does (held by the relay until the account has code).
 */
async function buildAndRecord(db: Queryable, ctx: ProjectContext, chain: ChainConfig, sender: IntentSender, plan: IntentPlan, deploying: boolean): Promise<IntentRow> {
  const accountCalls: AccountCall[] = plan.calls.map(({ to, value, data }) => ({ to, value, data }));
  const charging = plan.sponsor?.evaluate ? await planTokenCharge(db, ctx, chain, plan.sponsor.policy, sender.address) : null;
  // Our VerifyingPaymaster, or the ERC-7677 service of the paymaster the policy names.
  const paymaster = plan.sponsor ? await sponsorOf(db, ctx, chain, plan.sponsor.policy) : null;
  const callData = (charge?: bigint): Hex => {
    if (plan.callData) return plan.callData;
    const all = charging ? [...accountCalls, transferCall(charging.token, charging.collector.address as Address, charge!)] : accountCalls;
    // Nothing to call (a bare deployment): empty callData reaches the account's receive().
    return all.length ? encodeAccountCalls(all) : "0x";
  };
  const estimated = await estimateUserOperation(chain, {
    sender: sender.address,
    // With defaultGuardian, the factory makes the service the guardian at deployment (no addGuardian call needed).
    initCode: sender.deployed ? "0x" : deploymentOf(sender).initCode,
    deployedFirst: !deploying,
    callData: callData(charging?.estimateAmount),
    nonceKey: freshNonceKey(),
    sponsored: paymaster !== null,
    ...(paymaster && { paymasterStub: paymaster.stub }),
  });
  let built = estimated.op;
  let tokenCharge: bigint | null = null;
  if (charging) {
    tokenCharge = charging.chargeFor(estimated.estimate.maxCost, built.maxFeePerGas);
    built = { ...built, callData: callData(tokenCharge) };
    built.preVerificationGas = preVerificationGas(built);
  }
  const maxCost = requiredPrefund(built);
  const evaluate = plan.sponsor?.evaluate
    ? (tx: Tx) =>
        evaluateSponsorship(tx, plan.sponsor!.policy, plan.sponsor!.rules, { playerId: sender.playerId, accountId: sender.id, chainId: chain.chainId, calls: plan.ruled, maxCost })
    : null;
  // A remote service is asked only for what the rules allow; they are checked again under the lock that records the intent.
  // Signing happens outside the transaction: the service may be this one (an embedded database runs one transaction at a time).
  if (evaluate && paymaster?.remote) await db.transaction(evaluate);
  const sponsored = paymaster ? { ...built, paymasterAndData: await paymaster.sign(built) } : built;

  return db.transaction(async (tx) => {
    let op = sponsored;
    await evaluate?.(tx);
    await plan.check?.(tx, op);
    if (sender.signer) op = await signUserOperation(chain, op, sender.signer);
    const [row] = await tx
      .insert(transactionIntents)
      .values({
        id: newId("transactionIntent"),
        ...ctx,
        chainId: chain.chainId,
        playerId: sender.playerId,
        accountId: sender.id,
        policyId: plan.sponsor?.policy.id ?? null,
        status: sender.signer ? "pending" : "awaiting_signature",
        sponsored: plan.sponsor !== null,
        interactions: plan.interactions,
        userOperation: serializeUserOp(op),
        userOperationHash: userOperationHash(chain, op),
        maxCost: maxCost.toString(),
        tokenCharge: tokenCharge?.toString() ?? null,
        tokenWithdrawal: plan.tokenWithdrawal?.toString() ?? null,
        requestId: currentRequestId(),
        sessionId: plan.sessionId ?? null,
        optimistic: plan.optimistic,
        confirmationBlocks: plan.confirmationBlocks,
        deploysAccount: (op.initCode ?? "0x") !== "0x",
      })
      .returning();
    return row!;
  });
}

export async function getIntent(db: Queryable, ctx: ProjectContext, id: string): Promise<IntentRow> {
  const [row] = await db.select().from(transactionIntents).where(scoped(ctx, eq(transactionIntents.id, id)));
  if (!row) throw notFound("transaction intent", id);
  return row;
}

export async function listIntents(db: Queryable, ctx: ProjectContext, input: ListIntentsInput) {
  const where = scoped(
    ctx,
    input.chainId !== undefined ? eq(transactionIntents.chainId, input.chainId) : undefined,
    input.account?.length ? inArray(transactionIntents.accountId, input.account) : undefined,
    input.player?.length ? inArray(transactionIntents.playerId, input.player) : undefined,
    input.policy?.length ? inArray(transactionIntents.policyId, input.policy) : undefined,
    input.status !== undefined ? eq(transactionIntents.status, input.status === 1 ? "successful" : "failed") : undefined,
  );
  return listPage(db, transactionIntents, where, input);
}

/** The latest intents (ids) of players, accounts or policies, for embedding (10 each). */
export async function latestIntentIds(db: Queryable, column: "playerId" | "accountId" | "policyId" | "sessionId", ids: string[]): Promise<Map<string, { id: string }[]>> {
  const by = new Map<string, { id: string }[]>(ids.map((id) => [id, []]));
  if (ids.length === 0) return by;
  const col = transactionIntents[column];
  const ranked = db
    .select({
      id: transactionIntents.id,
      owner: sql<string>`${col}`.as("owner"),
      createdAt: transactionIntents.createdAt,
      rank: sql<number>`row_number() over (partition by ${col} order by ${transactionIntents.createdAt} desc, ${transactionIntents.id} desc)`.as("rank"),
    })
    .from(transactionIntents)
    .where(inArray(col, ids))
    .as("ranked");
  const rows = await db.select({ id: ranked.id, owner: ranked.owner }).from(ranked).where(lte(ranked.rank, 10)).orderBy(ranked.rank);
  for (const row of rows) by.get(row.owner)?.push({ id: row.id });
  return by;
}

/** The latest 10 intents of each owner, as `{id}` or (expanded) as the API shows them. */
export async function embeddedIntents(db: Queryable, column: "playerId" | "accountId" | "policyId" | "sessionId", ids: string[], expanded: boolean) {
  const latest = await latestIntentIds(db, column, ids);
  if (!expanded) return latest;
  const all = [...latest.values()].flat().map((r) => r.id);
  const rows = all.length ? await db.select().from(transactionIntents).where(inArray(transactionIntents.id, all)) : [];
  const byId = new Map(rows.map((r) => [r.id, serializeIntent(r)]));
  return new Map([...latest].map(([owner, refs]) => [owner, refs.map((r) => byId.get(r.id) ?? r)]));
}
