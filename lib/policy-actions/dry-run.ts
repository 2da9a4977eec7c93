// The dry run: POST /v1/policies/{id}/evaluate. What the policy would decide for an intent, every check with its
// reason, building the operation as the intent would (its real most cost) but signing, holding and recording nothing.
import { and, eq } from "drizzle-orm";
import { z } from "zod";
import type { Address } from "viem";
import { getAccount } from "@/lib/accounts/service";
import { chainFor } from "@/lib/chain/registry";
import type { Db } from "@/lib/db/client";
import { accounts } from "@/lib/db/schema";
import { getDeveloperAccount } from "@/lib/developer-accounts/service";
import { badRequest, referenced } from "@/lib/errors";
import { booleanField, chainIdField } from "@/lib/http/fields";
import { createIntentInput } from "@/lib/intents/schema";
import { liveDeployer } from "@/lib/intents/deployer";
import { resolveInteraction } from "@/lib/intents/interactions";
import { developerSender, playerSender, type IntentSender } from "@/lib/intents/sender";
import { planOperation } from "@/lib/intents/service";
import { getPlayer } from "@/lib/players/service";
import type { ProjectContext } from "@/lib/tenant";
import { formatUsd, sponsorshipClock, weiToUsdMicros } from "@/lib/sponsorship/budgets";
import { DECLINE_CODES } from "@/lib/sponsorship/declines";
import { balanceOf } from "@/lib/sponsorship/ledger";
import { usdPrice } from "@/lib/sponsorship/prices";
import { allSponsorshipChecks, type SponsorshipCheck } from "@/lib/policies/evaluate";
import { rulesOfPolicies } from "@/lib/policies/rules";
import { getPolicy } from "@/lib/policies/service";

const intentFields = createIntentInput.shape;

export const evaluatePolicyInput = z.strictObject({
  /** The chain of the operation; the policy's own when omitted. */
  chainId: chainIdField().optional(),
  interactions: intentFields.interactions,
  player: intentFields.player,
  account: intentFields.account,
  callWebhook: booleanField()
    .optional()
    .describe("Ask the policy's approval webhooks too (each call is logged as any other). Without it they are listed as not asked (passed null)."),
});

const checkResponse = z.object({
  rule: z.string().nullable(),
  type: z.string(),
  passed: z.boolean().nullable(),
  code: z.enum(DECLINE_CODES),
  reason: z.string(),
  remaining: z.string().nullable(),
  resetsAt: z.number().int().nullable(),
});

export const evaluationResponse = z.object({
  object: z.literal("policyEvaluation"),
  policy: z.string(),
  decision: z.enum(["sponsor", "decline"]),
  /** The first failed check's decline code, when declined: what the intent would be refused with. */
  code: z.enum(DECLINE_CODES).optional(),
  /** The operation's most cost, wei, and in dollars (6 decimals) when the chain has a price. */
  maxCost: z.string(),
  maxCostUsd: z.string().nullable(),
  checks: z.array(checkResponse),
});

export type EvaluatePolicyInput = z.output<typeof evaluatePolicyInput>;
export type PolicyEvaluation = z.infer<typeof evaluationResponse>;

/** The intent's sender, as an intent would have it, but creating nothing: the account named, or the player's on the chain. */
async function existingSender(db: Db, ctx: ProjectContext, chainId: number, input: EvaluatePolicyInput): Promise<IntentSender> {
  if (input.account?.startsWith("dac_")) {
    if (input.player) throw badRequest("A developer account's intent has no player: omit player.", { player: { message: "not with a developer account" } });
    return developerSender(await referenced(getDeveloperAccount(db, ctx, input.account), "account", input.account), chainId);
  }
  if (input.account) {
    const account = await referenced(getAccount(db, ctx, input.account), "account", input.account);
    if (account.chainId !== chainId) throw badRequest(`Account ${account.id} is on chain ${account.chainId}, not ${chainId}.`, { account: { value: account.id, message: `on chain ${account.chainId}` } });
    if (input.player && input.player !== account.playerId) {
      throw badRequest(`Account ${account.id} belongs to player ${account.playerId}, not ${input.player}.`, { player: { value: input.player, message: "not the account's player" } });
    }
    return playerSender(db, account);
  }
  if (!input.player) throw badRequest("Name the player (pla_) or the account (acc_, dac_) whose intent to evaluate.", { player: { message: "player or account is required" } });
  const player = await referenced(getPlayer(db, ctx, input.player), "player", input.player);
  const [account] = await db.select().from(accounts).where(and(eq(accounts.playerId, player.id), eq(accounts.chainId, chainId)));
  if (!account) {
    throw badRequest(`Player ${player.id} has no account on chain ${chainId} yet, and a dry run creates none: create one (POST /v1/accounts) or name an account.`, {
      player: { value: player.id, message: `no account on chain ${chainId}` },
    });
  }
  return playerSender(db, account);
}

/**
 * Every check of the policy against the intent `input` describes, built as that intent would be (its calls resolved,
 * its gas estimated, a token charge planned): nothing is signed, held or recorded, and the approval webhooks are asked
 * only with `callWebhook`. A deleted policy, or a chain other than the policy's, is a 400 as for an intent.
 */
export async function evaluatePolicy(db: Db, ctx: ProjectContext, policyId: string, input: EvaluatePolicyInput): Promise<PolicyEvaluation> {
  const policy = await getPolicy(db, ctx, policyId);
  const rules = (await rulesOfPolicies(db, ctx, [policy.id])).get(policy.id) ?? [];
  const chainId = input.chainId ?? policy.chainId;
  if (policy.deleted) throw badRequest(`Policy ${policy.id} is deleted: it sponsors nothing.`, { policy: { value: policy.id, message: "deleted" } });
  if (chainId !== policy.chainId) throw badRequest(`Policy ${policy.id} is for chain ${policy.chainId}, not ${chainId}.`, { chainId: { value: chainId, message: `the policy is for chain ${policy.chainId}` } });
  const chain = chainFor(ctx, chainId);
  const sender = await existingSender(db, ctx, chainId, input);
  const calls = await Promise.all(input.interactions.map((item, i) => resolveInteraction(db, ctx, sender, item, i)));
  const sponsor = { policy, rules, evaluate: true };
  // As the intent would be built now: carrying the account's deployment unless an intent in flight deploys it.
  const deploying = !sender.deployed && !(await liveDeployer(db, chainId, sender.id));
  const planned = await planOperation(db, ctx, chain, sender, { calls, sponsor }, deploying);
  const [price, chainTime] = await Promise.all([usdPrice(chain), sponsorshipClock(chain)]);
  const request = {
    playerId: sender.playerId,
    accountId: sender.id,
    chainId,
    calls: calls.map((c) => c.ruled),
    maxCost: planned.maxCost,
    maxFeePerGas: planned.op.maxFeePerGas,
    usdPrice: price,
    chainTime,
    source: "intent" as const,
    address: sender.address as Address,
    operationCalls: calls.map(({ to, data, value }) => ({ to, data, value })),
  };
  const checks: SponsorshipCheck[] = await allSponsorshipChecks(db, ctx, policy, rules, request, { callWebhook: input.callWebhook ?? false });
  // Our paymaster spends the project's sponsorship balance (a registered paymaster, its own service's money).
  if (!policy.paymasterId) {
    const { available } = await balanceOf(db, ctx, chainId);
    const passed = available >= planned.maxCost;
    checks.push({
      rule: null,
      type: "balance",
      code: "balance_insufficient",
      passed,
      remaining: (available > 0n ? available : 0n).toString(),
      resetsAt: null,
      reason: `the project's sponsorship balance on chain ${chainId} has ${available} wei available; this operation may cost up to ${planned.maxCost} wei${passed ? "" : ". Fund it (see GET /v1/sponsorship/balances)"}`,
    });
  }
  const failed = checks.find((c) => c.passed === false);
  return {
    object: "policyEvaluation",
    policy: policy.id,
    decision: failed ? "decline" : "sponsor",
    ...(failed && { code: failed.code }),
    maxCost: planned.maxCost.toString(),
    // Rounded up to the micro-dollar, as USD budgets count it.
    maxCostUsd: price === null ? null : formatUsd(weiToUsdMicros(planned.maxCost, price)),
    checks,
  };
}
