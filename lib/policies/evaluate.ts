// Deciding sponsorship: a policy's state, its rules (calls allowed, rate limits, budgets, time windows, gas price and
// approval webhooks) and the install's per-operation cap, checked for one operation. Every refusal is a 402
// sponsorship_declined naming its code, policy, rule, what remains of the limit and when it starts again
// (lib/sponsorship/declines.ts); a deleted policy, or one for another chain, is a wrong parameter (400).
import { sql } from "drizzle-orm";
import type { Address } from "viem";
import { chainFees } from "@/lib/chain/userop";
import type { ChainConfig } from "@/lib/chain/registry";
import type { Db, Queryable, Tx } from "@/lib/db/client";
import { ApiError } from "@/lib/errors";
import type { ProjectContext } from "@/lib/tenant";
import { approvalCalls, approveSponsorship, type ApprovalRequest } from "@/lib/sponsorship/approval";
import {
  budgetChecks,
  Checks,
  lockKeys,
  maxCostCheck,
  rateLimitChecks,
  requireUsable,
  stateChecks,
  type SponsorshipCheck,
  type SponsorshipRequest,
} from "./checks";
import type { PolicyRuleRow } from "./rules";
import type { PolicyRow } from "./service";

export { declineOf, DEFAULT_MAX_COST_WEI, policyRefused, sponsorMaxCost, type RuledCall, type SponsorshipCheck, type SponsorshipRequest } from "./checks";

/** How often an intent waiting for the chain's fee to fall under a gas_price ceiling reads the fee again. */
const GAS_PRICE_POLL_MS = 1000;
/** The longest an intent waits for the fee, whatever a rule says. */
const GAS_PRICE_MAX_WAIT_SECONDS = 600;

/**
 * The policy's state, chain and call rules (no counting), throwing the first decline: a 400 for a deleted policy or
 * another chain, a 402 policy_disabled or no_matching_rule. For an ERC-7677 stub, before anything is known of its gas.
 */
export function checkPolicyAllows(policy: PolicyRow, rules: PolicyRuleRow[], request: Pick<SponsorshipRequest, "chainId" | "calls">): void {
  requireUsable(policy, request.chainId);
  stateChecks(new Checks(policy, false), policy, rules.filter((r) => r.type !== "time_window" && r.type !== "gas_price"), { playerId: null, accountId: "", maxCost: 0n, ...request });
}

/** What an approval webhook is sent of the request. */
export function approvalRequestOf(request: SponsorshipRequest): ApprovalRequest {
  const ownId = /^(acc|dac)_/.test(request.accountId) ? request.accountId : null;
  const address = request.address ?? (/^0x[0-9a-fA-F]{40}$/.test(request.accountId) ? (request.accountId as Address) : ("0x" as Address));
  return {
    playerId: request.playerId,
    account: { id: ownId, address },
    chainId: request.chainId,
    calls: approvalCalls(request.operationCalls ?? [], request.calls),
    maxCost: request.maxCost,
    usdPrice: request.usdPrice ?? null,
    source: request.source === "erc7677" ? "erc7677" : "transaction_intent",
    ...(request.userOperationHash && { userOperationHash: request.userOperationHash }),
  };
}

/**
 * The checks made before anything costly or binding, OUTSIDE any transaction: the policy's state and chain, its calls,
 * time windows and gas price ceilings, then its approval webhooks (which wait on the developer's server). Throws a 400
 * (deleted, other chain) or the first 402 decline. The counting checks follow in evaluateSponsorship.
 */
export async function prepareSponsorship(db: Queryable, ctx: ProjectContext, policy: PolicyRow, rules: PolicyRuleRow[], request: SponsorshipRequest): Promise<void> {
  requireUsable(policy, request.chainId);
  stateChecks(new Checks(policy, false), policy, rules, request);
  if (rules.some((r) => r.type === "approval_webhook")) await approveSponsorship(db, ctx, policy, rules, approvalRequestOf(request));
}

/**
 * Whether evaluateSponsorship counts what the policy sponsored already (rate limits, budgets), under locks: then it
 * must run in the transaction that records the operation. Without such rules it reads nothing and decides from the
 * request alone, so a single statement may record (and hold for) the operation after it.
 */
export const sponsorshipCounts = (rules: PolicyRuleRow[]) => rules.some((r) => r.type === "rate_limit" || r.type === "budget");

/**
 * Decides whether the policy sponsors the request, throwing its first decline (402) otherwise. Must run inside the
 * transaction that records (and holds the cost of) the operation, right before the hold: it locks per policy and
 * subject (rate limits) and per budget's scope, so concurrent operations cannot together slip under a limit. Checks
 * the policy's state, calls, time windows and gas price again (cheap), then its rate limits, the install's per-operation
 * cap and its budgets. Approval webhooks are not asked here (prepareSponsorship does, outside the transaction).
 * Without counting rules (sponsorshipCounts false) it runs no statement, and `tx` may be any handle.
 */
export async function evaluateSponsorship(tx: Tx | Queryable, policy: PolicyRow, rules: PolicyRuleRow[], request: SponsorshipRequest): Promise<void> {
  requireUsable(policy, request.chainId);
  const checks = new Checks(policy, false);
  stateChecks(checks, policy, rules, request);
  for (const key of lockKeys(policy, rules, request)) await tx.execute(sql`select pg_advisory_xact_lock(hashtext(${key}))`);
  await rateLimitChecks(checks, tx, policy, rules, request);
  maxCostCheck(checks, policy, rules, request);
  await budgetChecks(checks, tx, policy, rules, request);
}

/**
 * Every check of the policy against the request, none stopping at a failure, holding and locking nothing (the dry
 * run). Approval webhooks are asked only with `callWebhook` (each logged as any call). A deleted policy or another
 * chain is still a 400.
 */
export async function allSponsorshipChecks(
  db: Db,
  ctx: ProjectContext,
  policy: PolicyRow,
  rules: PolicyRuleRow[],
  request: SponsorshipRequest,
  options: { callWebhook: boolean },
): Promise<SponsorshipCheck[]> {
  requireUsable(policy, request.chainId);
  const checks = new Checks(policy, true);
  stateChecks(checks, policy, rules, request);
  await rateLimitChecks(checks, db, policy, rules, request);
  maxCostCheck(checks, policy, rules, request);
  await budgetChecks(checks, db, policy, rules, request);
  for (const rule of rules.filter((r) => r.type === "approval_webhook")) {
    const base = { rule: rule.id, type: rule.type, code: "webhook_declined" as const };
    if (!options.callWebhook) {
      checks.add({ ...base, passed: null, reason: "not asked: a dry run calls approval webhooks only with callWebhook=true" });
      continue;
    }
    try {
      await approveSponsorship(db, ctx, policy, [rule], approvalRequestOf(request));
      checks.add({ ...base, passed: true, reason: `${rule.url} approved` });
    } catch (err) {
      if (!(err instanceof ApiError) || err.type !== "sponsorship_declined") throw err;
      checks.add({ ...base, passed: false, reason: err.message.replace(/\.$/, "") });
    }
  }
  return checks.list;
}

/**
 * For intents the service builds and signs: waits, up to the longest waitSeconds of the policy's gas_price rules, for
 * the chain's fee (the maxFeePerGas the op would be built with) to fall under the lowest ceiling. Returns at once
 * without such a rule or when the fee is under it already; after the wait the op is built as usual, and a fee still
 * over the ceiling is declined (gas_price_too_high) by the checks. Call it before estimating, outside any transaction.
 */
export async function waitForGasCeiling(chain: ChainConfig, rules: PolicyRuleRow[]): Promise<void> {
  const ceilings = rules.filter((r) => r.type === "gas_price" && r.maxFeePerGas !== null);
  const wait = Math.min(Math.max(0, ...ceilings.map((r) => r.waitSeconds ?? 0)), GAS_PRICE_MAX_WAIT_SECONDS);
  if (wait === 0) return;
  const ceiling = ceilings.map((r) => BigInt(r.maxFeePerGas!)).reduce((a, b) => (b < a ? b : a));
  const deadline = Date.now() + wait * 1000;
  for (;;) {
    const { maxFeePerGas } = await chainFees(chain);
    const left = deadline - Date.now();
    if (maxFeePerGas <= ceiling || left <= 0) return;
    await new Promise((resolve) => setTimeout(resolve, Math.min(GAS_PRICE_POLL_MS, left)));
  }
}
