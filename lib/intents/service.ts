// Transaction intents: creating one (building, sponsoring and signing its userOperation), recording it, reading them.
import crypto from "node:crypto";
import { eq, gt, inArray, sql } from "drizzle-orm";
import { toHex, type Address, type Hex, type SignedAuthorization } from "viem";
import { getAccount } from "@/lib/accounts/service";
import { deploymentOf } from "@/lib/chain/accounts";
import { requireDeployment } from "@/lib/chain/contracts";
import { publicClient } from "@/lib/chain/clients";
import { chainFor, type ChainConfig } from "@/lib/chain/registry";
import {
  encodeAccountCalls,
  InsufficientFundsError,
  estimateUserOperation,
  preVerificationGas,
  requiredPrefund,
  UserOperationRejectedError,
  type AccountCall,
} from "@/lib/chain/userop";
import { entryPointVersionOf } from "@/lib/account-records/types";
import { authorizationOf, planOperationV08 } from "./operation-v08";
import { hashOp, opDeploys, signatureFacts, signOp, storeOp, type VersionedOp } from "@/lib/intent-records/versioned-op";
import type { Queryable, Tx } from "@/lib/db/client";
import { transactionIntents } from "@/lib/db/schema";
import { inScope } from "@/lib/db/scope";
import { badRequest, notFound, referenced } from "@/lib/errors";
import { listPage } from "@/lib/http/list";
import { newId } from "@/lib/ids";
import { evaluateSponsorship, prepareSponsorship, sponsorshipCounts, waitForGasCeiling, type RuledCall, type SponsorshipRequest } from "@/lib/policies/evaluate";
import { sponsorshipClock } from "@/lib/sponsorship/budgets";
import { policyWithRules, type PolicyRuleRow } from "@/lib/policies/rules";
import type { PolicyRow } from "@/lib/policies/service";
import { planTokenCharge, transferCall } from "@/lib/policies/tokens";
import type { ProjectContext } from "@/lib/tenant";
import type { CreateIntentInput, ListIntentsInput } from "./schema";
import { claimDeployment, DEPLOYER_INDEX, liveDeployer, violates } from "./deployer";
import { resolveInteraction } from "./interactions";
import { playerSender, resolveSender, type IntentSender } from "./sender";
import { sessionSigning } from "./session-keys";
import { currentRequestId } from "@/lib/http/request-context";
import { sponsorOf } from "@/lib/paymasters/sponsor";
import { recordDecline, SponsorshipDeclined } from "@/lib/sponsorship/declines";
import { heldInsert } from "@/lib/sponsorship/held-insert";
import type { HoldCause, HoldRequest } from "@/lib/sponsorship/ledger";
import { metrics } from "@/lib/metrics";
import { usdPrice } from "@/lib/sponsorship/prices";

export type IntentRow = typeof transactionIntents.$inferSelect;

export { SPONSORSHIP_SECONDS } from "@/lib/paymasters/sponsor";

/** A random 2D nonce key: concurrent intents of one account never wait for or collide with each other. */
const freshNonceKey = () => BigInt(toHex(crypto.randomBytes(24)));

export async function loadPolicy(db: Queryable, ctx: ProjectContext, id: string | undefined): Promise<Sponsor | null> {
  if (id === undefined) return null;
  return { ...(await referenced(policyWithRules(db, ctx, id), "policy", id)), evaluate: true };
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
  const signing = session ? { ...sender, signer: null } : sender;
  const plan: IntentPlan = {
    calls,
    ruled: calls.map((c) => c.ruled),
    sponsor,
    interactions: input.interactions.map((item) => ({ ...item, value: item.value ?? "0" })),
    optimistic: input.optimistic ?? false,
    confirmationBlocks: input.confirmationBlocks ?? 5,
    ...(session && { sessionId: session.sessionId, prepareCheck: session.prepareCheck }),
    ...(input.signedAuthorization && { signedAuthorization: authorizationOf(input.signedAuthorization) }),
  };
  let intent: IntentRow;
  try {
    intent = await recordIntent(db, ctx, chain, signing, plan);
  } catch (err) {
    if (!(err instanceof SponsorshipDeclined) || input.fallback !== "self_pay") throw err;
    intent = await selfPaid(db, ctx, chain, signing, plan, err);
  }
  return { intent, chain };
}

/**
 * fallback=self_pay: the intent the policy declined, built again without the paymaster and paid from the account's own
 * balance, recording the decline it fell back from. An account that cannot pay its gas (and value) keeps the decline.
 */
async function selfPaid(db: Queryable, ctx: ProjectContext, chain: ChainConfig, sender: IntentSender, plan: IntentPlan, decline: SponsorshipDeclined): Promise<IntentRow> {
  try {
    return await recordIntent(db, ctx, chain, sender, { ...plan, sponsor: null, sponsorshipDecline: decline.summary() });
  } catch (err) {
    if (err instanceof InsufficientFundsError) throw decline;
    throw err;
  }
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
  /** What the sponsorship ledger records the op's hold as caused by (default "intent"). */
  cause?: HoldCause;
  /** fallback=self_pay: the decline the intent fell back from (it pays its own gas), recorded on it. */
  sponsorshipDecline?: Record<string, unknown>;
  /** Runs in the transaction that records the intent, to refuse it under a lock (e.g. over-withdrawal). */
  check?: (tx: Tx, op: VersionedOp) => Promise<void>;
  /** Reads what a check needs from the chain before that transaction (no remote call holds it open); the check it gives runs in it. */
  prepareCheck?: (op: VersionedOp) => Promise<(tx: Tx) => Promise<void>>;
  /** A Delegated_v08 account's first intent: the owner's signed EIP-7702 authorization (to this service's DelegatedAccountV8). */
  signedAuthorization?: SignedAuthorization;
}

/**
 * Builds the userOperation with real gas, decides sponsorship under the policy in the same
 * transaction that records the intent (so limits hold under concurrency), and signs it when
 * custodial. Nothing is sent here.
 */
export async function recordIntent(db: Queryable, ctx: ProjectContext, chain: ChainConfig, sender: IntentSender, plan: IntentPlan): Promise<IntentRow> {
  try {
    return await recordOnce(db, ctx, chain, sender, plan);
  } catch (err) {
    // A refusal to sponsor is recorded (the dashboard's declines by reason) once its transaction has rolled back.
    if (err instanceof SponsorshipDeclined) await recordDecline(db, ctx, err, { chainId: chain.chainId, playerId: sender.playerId, accountId: sender.id, source: "intent" });
    throw err;
  }
}

/**
 * The chain moved under the build: it read the account without code and the estimate found it deployed (its
 * deploying op landed, or landed again after a reorg), or the reverse (a reorg took the deployment between two reads).
 * Built again, the account's code is read again and the op carries init fields or not as the chain now says.
 */
const deployedMeanwhile = (err: unknown) => err instanceof UserOperationRejectedError && err.code === "AA10";
const undeployedMeanwhile = (err: unknown) => err instanceof UserOperationRejectedError && err.code === "AA20";

async function recordOnce(db: Queryable, ctx: ProjectContext, chain: ChainConfig, sender: IntentSender, plan: IntentPlan): Promise<IntentRow> {
  if (!sender.deployed) return recordFirst(db, ctx, chain, sender, plan);
  try {
    return await buildAndRecord(db, ctx, chain, sender, plan, false);
  } catch (err) {
    if (deployedMeanwhile(err)) return await buildAndRecord(db, ctx, chain, sender, plan, false);
    // Deployed by our books, not on the chain now (a reorg took the deployment): built as a first op again.
    if (undeployedMeanwhile(err)) return await recordFirst(db, ctx, chain, { ...sender, deployed: false }, plan);
    throw err;
  }
}

/** An intent of an account not deployed by our books: concurrent first intents, one deploys it, the others run after it (see DEPLOYER_INDEX). */
async function recordFirst(db: Queryable, ctx: ProjectContext, chain: ChainConfig, sender: IntentSender, plan: IntentPlan): Promise<IntentRow> {
  const release = claimDeployment(chain.chainId, sender.id);
  try {
    const claimed = release !== null;
    // Read with the account when resolveSender found it (a deployer recorded since then loses the index race below).
    const deploying = claimed && !(sender.deployerLive ?? ((await liveDeployer(db, chain.chainId, sender.id)) !== undefined));
    try {
      return await buildAndRecord(db, ctx, chain, sender, plan, deploying);
    } catch (err) {
      // Another process's intent claimed the deployment meanwhile, or the chain moved under the build.
      if (deploying && violates(err, DEPLOYER_INDEX)) return await buildAndRecord(db, ctx, chain, sender, plan, false);
      if (deployedMeanwhile(err) || undeployedMeanwhile(err)) return await buildAndRecord(db, ctx, chain, sender, plan, deploying && !deployedMeanwhile(err));
      throw err;
    }
  } finally {
    release?.();
  }
}

/** An intent's operation as built: gas estimated, fees chosen, a token charge planned; not signed by anyone yet. */
export interface PlannedOperation {
  /** The op of the account's EntryPoint version. */
  versioned: VersionedOp;
  /** The op's fee fields (either version has them). */
  op: { maxFeePerGas: bigint; maxPriorityFeePerGas: bigint };
  /** Its most cost, wei (what a paymaster, or the account, must prefund). */
  maxCost: bigint;
  tokenCharge: bigint | null;
  /** Our VerifyingPaymaster(V8), or the ERC-7677 service of the paymaster the policy names; null when the account pays. */
  paymaster: { remote: boolean } | null;
  /** The op with its paymaster's final data signed (the account signs after this); the op itself without a paymaster. */
  sponsored(): Promise<VersionedOp>;
}

/**
 * Builds the intent's operation without recording anything (the dry run's "what would it cost"): the sponsor's
 * paymaster chosen (its stub only: nothing is signed), gas estimated, a token charge planned. `deploying`: for an
 * undeployed account, the op carries the initCode; otherwise it is built to run after the op that does. An EntryPoint
 * v0.8 account's op is a v0.8 one (see planOperationV08).
 */
export async function planOperation(
  db: Queryable,
  ctx: ProjectContext,
  chain: ChainConfig,
  sender: IntentSender,
  plan: Pick<IntentPlan, "calls" | "sponsor" | "callData" | "signedAuthorization">,
  deploying: boolean,
): Promise<PlannedOperation> {
  const accountCalls: AccountCall[] = plan.calls.map(({ to, value, data }) => ({ to, value, data }));
  const charging = plan.sponsor?.evaluate ? await planTokenCharge(db, ctx, chain, plan.sponsor.policy, sender.address) : null;
  if (entryPointVersionOf(sender.accountType) === "0.8") {
    const planned = await planOperationV08(
      chain,
      sender,
      { calls: accountCalls, callData: plan.callData, policy: plan.sponsor?.policy ?? null, signedAuthorization: plan.signedAuthorization, nonceKey: freshNonceKey() },
      charging,
      deploying,
    );
    const { op, paymaster } = planned;
    return {
      ...planned,
      versioned: { version: "0.8", op },
      sponsored: async () => ({ version: "0.8", op: paymaster ? { ...op, paymasterData: await paymaster.sign(op) } : op }),
    };
  }
  if (plan.signedAuthorization) {
    throw badRequest("signedAuthorization applies to Delegated_v08 accounts only.", { signedAuthorization: { message: `account ${sender.id} is not a delegated account` } });
  }
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
    // Our paymaster's stub is estimateUserOperation's own, from the block it reads anyway (one round trip less).
    ...(paymaster?.remote && { paymasterStub: paymaster.stub }),
  });
  let built = estimated.op;
  let tokenCharge: bigint | null = null;
  if (charging) {
    tokenCharge = charging.chargeFor(estimated.estimate.maxCost, built.maxFeePerGas);
    built = { ...built, callData: callData(tokenCharge) };
    built.preVerificationGas = preVerificationGas(built);
  }
  return {
    versioned: { version: "0.6", op: built },
    op: built,
    maxCost: requiredPrefund(built),
    tokenCharge,
    paymaster,
    sponsored: async () => ({ version: "0.6", op: paymaster ? { ...built, paymasterAndData: await paymaster.sign(built) } : built }),
  };
}

/**
 * Builds and records the intent. `deploying`: for an undeployed account, this intent's op carries the initCode;
 * otherwise it is built to run after the op that does (held by the relay until the account has code).
 */
async function buildAndRecord(db: Queryable, ctx: ProjectContext, chain: ChainConfig, sender: IntentSender, plan: IntentPlan, deploying: boolean): Promise<IntentRow> {
  const accountCalls: AccountCall[] = plan.calls.map(({ to, value, data }) => ({ to, value, data }));
  // A gas_price ceiling: an intent the service signs waits (up to the rule's waitSeconds) for the fee to fall under it.
  if (plan.sponsor?.evaluate && sender.signer) await waitForGasCeiling(chain, plan.sponsor.rules);
  const building = performance.now();
  // The price and clock the rules judge by (and the hold records), read with the estimate's own reads: its latest block
  // is the same fetch (lib/chain/coalesce.ts) rather than one more round trip after it.
  const readings = plan.sponsor ? Promise.all([usdPrice(chain), sponsorshipClock(chain)]) : null;
  readings?.catch(() => {}); // awaited below; not left unhandled if the build fails first
  const planned = await planOperation(db, ctx, chain, sender, plan, deploying);
  const signing = performance.now();
  metrics.intentStageSeconds.observe({ stage: "build" }, (signing - building) / 1000);
  const { op: built, maxCost, tokenCharge, paymaster } = planned;
  // Our paymaster spends the project's sponsorship balance: the op's most cost is held in the transaction that records
  // it, before its signed paymasterAndData leaves the service (a registered paymaster spends its own service's money).
  const ours = paymaster !== null && !paymaster.remote;
  // Read before any transaction (chain calls): the price and clock the rules judge by are the ones the hold records.
  const [price, chainTime] = readings ? await readings : [null, undefined];
  const request: SponsorshipRequest = {
    playerId: sender.playerId,
    accountId: sender.id,
    address: sender.address,
    chainId: chain.chainId,
    calls: plan.ruled,
    operationCalls: accountCalls,
    maxCost,
    maxFeePerGas: built.maxFeePerGas,
    usdPrice: price,
    chainTime,
    source: "intent",
  };
  const evaluate = plan.sponsor?.evaluate ? (q: Queryable) => evaluateSponsorship(q, plan.sponsor!.policy, plan.sponsor!.rules, request) : null;
  // Rate limits and budgets count under locks, in the transaction that records the intent; other rules need none.
  const counting = plan.sponsor?.evaluate === true && sponsorshipCounts(plan.sponsor.rules);
  // State, calls, time windows, gas price and approval webhooks: decided before anything is signed, outside the transaction.
  if (plan.sponsor?.evaluate) await prepareSponsorship(db, ctx, plan.sponsor.policy, plan.sponsor.rules, request);
  // A remote service is asked only for what the rules allow; they are checked again under the lock that records the intent.
  // Signing happens outside the transaction: the service may be this one (an embedded database runs one transaction at a time).
  if (evaluate && paymaster?.remote) await (counting ? db.transaction(evaluate) : evaluate(db));
  const sponsored = await planned.sponsored();
  const prepared = await plan.prepareCheck?.(sponsored);
  const id = newId("transactionIntent");

  // Signed before the transaction (a local key): the project's balance row, locked by the hold, is held only to commit.
  // An owner-held delegated EOA's authorization still unsigned: the owner signs it and the op (nextAction).
  const op = sender.signer ? await signOp(chain, sponsored, sender.signer) : sponsored;
  metrics.intentStageSeconds.observe({ stage: "sign" }, (performance.now() - signing) / 1000);

  const row: IntentInsert = {
    id,
    projectId: ctx.projectId,
    livemode: ctx.livemode,
    chainId: chain.chainId,
    playerId: sender.playerId,
    accountId: sender.id,
    policyId: plan.sponsor?.policy.id ?? null,
    status: sender.signer ? "pending" : "awaiting_signature",
    sponsored: plan.sponsor !== null,
    interactions: plan.interactions,
    userOperation: storeOp(op),
    userOperationHash: hashOp(chain, op),
    maxCost: maxCost.toString(),
    tokenCharge: tokenCharge?.toString() ?? null,
    tokenWithdrawal: plan.tokenWithdrawal?.toString() ?? null,
    requestId: currentRequestId() ?? null,
    sessionId: plan.sessionId ?? null,
    optimistic: plan.optimistic,
    confirmationBlocks: plan.confirmationBlocks,
    deploysAccount: opDeploys(op),
    sponsorshipDecline: plan.sponsorshipDecline ?? null,
  };
  // Our paymaster's hold, in the statement that records the intent (the project's balance row is locked from there to its commit).
  const held: HoldRequest | null = ours
    ? {
        chainId: chain.chainId,
        amount: maxCost,
        cause: plan.cause ?? "intent",
        usdPrice: price,
        chainTime,
        intentId: id,
        policyId: plan.sponsor!.policy.id,
        playerId: sender.playerId,
        accountId: sender.id,
      }
    : null;
  // The record of our paymaster's signature, with its hold: what the chain follower attributes the op's landing by.
  const signature = held ? signatureFacts(chain, op, row.userOperationHash as Hex) : null;
  if (held && !signature) throw new Error(`intent ${id}: our paymaster's sponsorship is missing from the signed operation`);
  const record = async (q: Queryable) => (held ? recordHeldIntent(q, ctx, row, held, signature!) : (await q.insert(transactionIntents).values(row).returning())[0]!);

  // Nothing to count or check under a lock: the one statement is the whole write.
  if (!counting && !plan.check && !prepared) {
    await evaluate?.(db);
    return record(db);
  }
  return db.transaction(async (tx) => {
    await evaluate?.(tx);
    await plan.check?.(tx, sponsored);
    await prepared?.(tx);
    return record(tx);
  });
}

type IntentInsert = Pick<typeof transactionIntents.$inferInsert, (typeof INTENT_COLUMNS)[number]>;

/** The columns buildAndRecord gives an intent (the others keep their defaults). */
const INTENT_COLUMNS = [
  "id",
  "projectId",
  "livemode",
  "chainId",
  "playerId",
  "accountId",
  "policyId",
  "status",
  "sponsored",
  "interactions",
  "userOperation",
  "userOperationHash",
  "maxCost",
  "tokenCharge",
  "tokenWithdrawal",
  "requestId",
  "sessionId",
  "optimistic",
  "confirmationBlocks",
  "deploysAccount",
  "sponsorshipDecline",
] as const;

/** An intent and its hold in one statement (see heldInsert). */
const recordHeldIntent = heldInsert("record_held_intent", transactionIntents, INTENT_COLUMNS, "intentId");

/** The intent a request recorded, within the day an Idempotency-Key remembers it (the project's recent intents are indexed). */
export async function intentOfRequest(db: Queryable, ctx: ProjectContext, requestId: string): Promise<IntentRow | null> {
  const [row] = await db
    .select()
    .from(transactionIntents)
    .where(inScope(transactionIntents, ctx, gt(transactionIntents.createdAt, sql`now() - interval '25 hours'`), eq(transactionIntents.requestId, requestId)))
    .limit(1);
  return row ?? null;
}

export async function getIntent(db: Queryable, ctx: ProjectContext, id: string): Promise<IntentRow> {
  const [row] = await db.select().from(transactionIntents).where(inScope(transactionIntents, ctx, eq(transactionIntents.id, id)));
  if (!row) throw notFound("transaction intent", id);
  return row;
}

export async function listIntents(db: Queryable, ctx: ProjectContext, input: ListIntentsInput) {
  const where = inScope(
    transactionIntents,
    ctx,
    input.chainId !== undefined ? eq(transactionIntents.chainId, input.chainId) : undefined,
    input.account?.length ? inArray(transactionIntents.accountId, input.account) : undefined,
    input.player?.length ? inArray(transactionIntents.playerId, input.player) : undefined,
    input.policy?.length ? inArray(transactionIntents.policyId, input.policy) : undefined,
    input.status !== undefined ? eq(transactionIntents.status, input.status === 1 ? "successful" : "failed") : undefined,
  );
  return listPage(db, transactionIntents, where, input);
}
