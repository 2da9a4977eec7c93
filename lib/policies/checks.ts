// The checks of one operation against a policy: its state, calls, time windows and gas price (stateChecks), rate
// limits, the install's per-operation cap and budgets, each recorded by a Checks collector that throws the first
// failure as a 402 decline (or, for the dry run, keeps them all). lib/policies/evaluate.ts runs them.
import { and, eq, gte, inArray, ne, or, sql } from "drizzle-orm";
import type { Address, Hex } from "viem";
import type { Queryable } from "@/lib/db/client";
import { sponsoredOperations, transactionIntents } from "@/lib/db/schema";
import { badRequest } from "@/lib/errors";
import { budgetHolds, budgetLimit, budgetUse, showAmount, weiToUsdMicros, type BudgetSubject } from "@/lib/sponsorship/budgets";
import { declined, type DeclineCode, type SponsorshipDeclined } from "@/lib/sponsorship/declines";
import type { PolicyRuleRow } from "./rules";
import { ALL_FUNCTIONS } from "./schema";
import type { PolicyRow } from "./service";
import { envText } from "@/lib/config";

/** One call of an intent, as policy rules see it. */
export interface RuledCall {
  /** The registered contract called, if the interaction named one. */
  contractId: string | null;
  to: Address;
  functionName: string | null;
  /** A call to the account itself (ownership, session keys, recovery, deployment). */
  self: boolean;
}

export interface SponsorshipRequest {
  /** Rate limits and player budgets count per player; a developer account's intents (no player) count per account. */
  playerId: string | null;
  /** The sender's id (acc_, dac_), or an outside ERC-7677 sender's lowercase address. */
  accountId: string;
  chainId: number;
  calls: RuledCall[];
  /** The most the operation may cost, in wei (gas limits × maxFeePerGas); 0 before its gas is known (ERC-7677 stub). */
  maxCost: bigint;
  /** The operation's maxFeePerGas, wei: gas_price rules compare it with their ceiling. Unknown (a stub): not compared. */
  maxFeePerGas?: bigint;
  /** The chain's native coin in USD (lib/sponsorship/prices.ts usdPrice), read before the transaction; null: no price. */
  usdPrice?: number | null;
  /**
   * The chain's clock (sponsorshipClock in lib/sponsorship/budgets.ts), read before the transaction: time windows and
   * budgets' periods follow it. Pass the same instant to the hold. Without it, the wall clock.
   */
  chainTime?: Date;
  /** Who asks (for the approval webhook's payload and the declines' record); default intent. */
  source?: "intent" | "erc7677";
  /**
   * An operation signed over ERC-7677: its sender and nonce. Asking again for the same nonce replaces its earlier
   * record (only one op of a nonce can land), so that record is not counted against it.
   */
  operation?: { sender: Address; nonce: bigint };
  /** For the approval webhook: the sender's address, the operation's calls as sent (to, data, value) and its hash. */
  address?: Address;
  operationCalls?: { to: Address; data: Hex; value?: bigint }[];
  userOperationHash?: Hex;
}

/** One check of the policy against an operation, as the dry run shows it; a failed one is what a decline says. */
export interface SponsorshipCheck {
  /** The rule checked (afu_…), or null for the policy itself, its calls as a whole, the install's cap or the balance. */
  rule: string | null;
  /** The rule's type, or policy | calls | max_cost | balance. */
  type: string;
  /** null: not evaluated (an approval webhook in a dry run not asked to call it). */
  passed: boolean | null;
  /** The decline this check gives when it fails. */
  code: DeclineCode;
  reason: string;
  /** What is left of the limit before this operation (wei, a count, or dollars with 6 decimals), when it is one. */
  remaining: string | null;
  /** When the limit starts again (Unix seconds), when it does. */
  resetsAt: number | null;
}

/**
 * The most one operation sponsored by our paymaster may cost (its prefund: gas limits × maxFeePerGas) when its policy
 * has no per-operation limit of its own (a gas_per_transaction rule, or a budget of scope operation):
 * SPONSOR_MAX_COST_WEI, default 10^16 wei (0.01 of the native coin). Such a rule replaces it, higher or lower.
 */
export const DEFAULT_MAX_COST_WEI = 10n ** 16n;
export function sponsorMaxCost(): bigint {
  const raw = envText("SPONSOR_MAX_COST_WEI");
  return raw && /^\d{1,78}$/.test(raw) ? BigInt(raw) : DEFAULT_MAX_COST_WEI;
}


const INTERVAL_SQL: Record<string, string> = { minute: "minutes", hour: "hours", day: "days", week: "weeks", month: "months" };

/** A wrong parameter rather than a refusal: the policy cannot sponsor this at all (deleted, another chain). 400. */
export const policyRefused = (policy: PolicyRow, message: string) =>
  badRequest(`Policy ${policy.id} does not sponsor this operation: ${message}`, {
    policy: { value: policy.id, message },
  });

const ruleAllows = (rule: PolicyRuleRow, call: RuledCall) => {
  if (call.self) return rule.type === "account_functions";
  if (rule.type !== "contract_functions") return false;
  const anyFunction = rule.functionName === null || rule.functionName === ALL_FUNCTIONS;
  const functionMatches = anyFunction || (call.functionName !== null && rule.functionName === call.functionName);
  if (rule.wildcard) return functionMatches;
  return call.contractId !== null && rule.contractId === call.contractId && functionMatches;
};

const describeCall = (call: RuledCall) =>
  call.self ? "a call to the account itself (needs an account_functions rule)" : `${call.functionName ?? "a raw call"} on ${call.contractId ?? call.to}`;

/** A minute-or-longer window as a SQL interval, e.g. `3 days`. */
const windowOf = (rule: PolicyRuleRow) => `${rule.timeIntervalValue} ${INTERVAL_SQL[rule.timeIntervalType!]}`;

const unix = (d: Date) => Math.floor(d.getTime() / 1000);
const iso = (d: Date) => d.toISOString().replace(".000Z", "Z");

/** The 402 a failed check gives. */
export function declineOf(policy: PolicyRow, check: SponsorshipCheck): SponsorshipDeclined {
  return declined(check.code, `Policy ${policy.id} does not sponsor this operation: ${check.reason}.`, {
    policy: policy.id,
    rule: check.rule ?? undefined,
    remaining: check.remaining ?? undefined,
    resetsAt: check.resetsAt ?? undefined,
  });
}

/** Collects checks; unless every check is wanted (a dry run), the first that fails throws its decline. */
export class Checks {
  readonly list: SponsorshipCheck[] = [];
  constructor(
    private readonly policy: PolicyRow,
    private readonly all: boolean,
  ) {}

  add(check: Omit<SponsorshipCheck, "remaining" | "resetsAt"> & Partial<Pick<SponsorshipCheck, "remaining" | "resetsAt">>) {
    const full = { remaining: null, resetsAt: null, ...check };
    this.list.push(full);
    if (!this.all && full.passed === false) throw declineOf(this.policy, full);
  }
}

/** Deleted, or for another chain: a 400 naming `policy` (not a decline: the request names the wrong policy). */
export function requireUsable(policy: PolicyRow, chainId: number) {
  if (policy.deleted) throw policyRefused(policy, "the policy is deleted");
  if (policy.chainId !== chainId) throw policyRefused(policy, `the policy is for chain ${policy.chainId}, the operation for chain ${chainId}`);
}

const clockOf = (request: Pick<SponsorshipRequest, "chainTime">) => request.chainTime ?? new Date();

/**
 * What needs no counting: the policy enabled, every call allowed by a rule, inside every time window (on the chain's
 * clock) and under every gas price ceiling.
 */
export function stateChecks(checks: Checks, policy: PolicyRow, rules: PolicyRuleRow[], request: SponsorshipRequest) {
  checks.add({ rule: null, type: "policy", code: "policy_disabled", passed: policy.enabled, reason: policy.enabled ? "the policy is enabled" : "the policy is disabled" });

  const refused = request.calls.filter((call) => !rules.some((rule) => ruleAllows(rule, call)));
  checks.add({
    rule: null,
    type: "calls",
    code: "no_matching_rule",
    passed: refused.length === 0,
    reason: refused.length === 0 ? `every call is allowed by a rule (${request.calls.length})` : refused.map((call) => `no rule allows ${describeCall(call)}`).join("; "),
  });

  const now = clockOf(request);
  for (const rule of rules.filter((r) => r.type === "time_window")) {
    const base = { rule: rule.id, type: rule.type, code: "outside_time_window" as const };
    if (rule.startsAt && now < rule.startsAt) {
      checks.add({ ...base, passed: false, reason: `sponsorship starts at ${iso(rule.startsAt)} (the chain's time is ${iso(now)})`, resetsAt: unix(rule.startsAt) });
    } else if (rule.endsAt && now >= rule.endsAt) {
      checks.add({ ...base, passed: false, reason: `sponsorship ended at ${iso(rule.endsAt)} (the chain's time is ${iso(now)})` });
    } else {
      const until = rule.endsAt ? ` until ${iso(rule.endsAt)}` : "";
      checks.add({ ...base, passed: true, reason: `the chain's time ${iso(now)} is within the window${rule.startsAt ? ` from ${iso(rule.startsAt)}` : ""}${until}` });
    }
  }

  for (const rule of rules.filter((r) => r.type === "gas_price")) {
    const ceiling = BigInt(rule.maxFeePerGas ?? "0");
    const base = { rule: rule.id, type: rule.type, code: "gas_price_too_high" as const };
    if (request.maxFeePerGas === undefined) {
      checks.add({ ...base, passed: true, reason: `the operation's maxFeePerGas is not known yet (checked against ${ceiling} wei when it is)` });
    } else if (request.maxFeePerGas > ceiling) {
      checks.add({ ...base, passed: false, reason: `the operation's maxFeePerGas of ${request.maxFeePerGas} wei is over the ${ceiling} wei ceiling` });
    } else {
      checks.add({ ...base, passed: true, reason: `the operation's maxFeePerGas of ${request.maxFeePerGas} wei is within the ${ceiling} wei ceiling` });
    }
  }
}

const subjectOf = (policy: PolicyRow, request: SponsorshipRequest): BudgetSubject => ({
  projectId: policy.projectId,
  livemode: policy.livemode,
  playerId: request.playerId,
  accountId: request.accountId,
  chainId: request.chainId,
  operation: request.operation,
});

/** The advisory locks the counting checks take (sorted, so concurrent evaluations never wait on each other in a cycle). */
export function lockKeys(policy: PolicyRow, rules: PolicyRuleRow[], request: SponsorshipRequest): string[] {
  const keys = new Set<string>();
  if (rules.some((r) => r.type === "rate_limit")) keys.add(`${policy.id}:${request.playerId ?? request.accountId}`);
  for (const rule of rules.filter((r) => r.type === "budget")) {
    const holds = budgetHolds(policy, rule, subjectOf(policy, request));
    if (holds) keys.add(holds.lockKey);
  }
  return [...keys].sort();
}

/** Rate limits: counts and gas of the subject's recent sponsored intents and ERC-7677 operations under the policy. */
export async function rateLimitChecks(checks: Checks, q: Queryable, policy: PolicyRow, rules: PolicyRuleRow[], request: SponsorshipRequest) {
  const subject = request.playerId ?? request.accountId;
  for (const rule of rules.filter((r) => r.type === "rate_limit")) {
    const limit = BigInt(rule.gasLimit ?? 0);
    const base = { rule: rule.id, type: rule.type, code: "rate_limited" as const };
    if (rule.functionName === "gas_per_transaction") {
      const passed = request.maxCost <= limit;
      checks.add({
        ...base,
        code: "max_cost_exceeded",
        passed,
        remaining: limit.toString(),
        reason: passed ? `${mostCost(request)}, within the ${limit} wei per transaction` : `${mostCost(request)}, over the ${limit} wei per transaction`,
      });
      continue;
    }
    const window = windowOf(rule);
    const recent = and(
      eq(transactionIntents.policyId, policy.id),
      request.playerId ? eq(transactionIntents.playerId, request.playerId) : eq(transactionIntents.accountId, request.accountId),
      eq(transactionIntents.sponsored, true),
      inArray(transactionIntents.status, ["awaiting_signature", "pending", "broadcast", "successful", "failed"]),
      gte(transactionIntents.createdAt, sql`now() - ${window}::interval`),
    );
    // Operations signed over ERC-7677 count as well: by player, else by the account (an outside sender by address).
    const op = request.operation;
    const recentOps = and(
      eq(sponsoredOperations.policyId, policy.id),
      request.playerId ? eq(sponsoredOperations.playerId, request.playerId) : eq(sql`coalesce(${sponsoredOperations.accountId}, ${sponsoredOperations.sender})`, request.accountId),
      gte(sponsoredOperations.createdAt, sql`now() - ${window}::interval`),
      op ? or(ne(sponsoredOperations.sender, op.sender.toLowerCase()), ne(sponsoredOperations.nonce, op.nonce.toString()), ne(sponsoredOperations.chainId, request.chainId)) : undefined,
    );
    // When the oldest counted one leaves the window (Unix seconds).
    const resetOf = (createdAt: typeof transactionIntents.createdAt | typeof sponsoredOperations.createdAt) =>
      sql<string | null>`floor(extract(epoch from min(${createdAt}) + ${window}::interval))::bigint::text`;
    const earliest = (...values: (string | null | undefined)[]) => {
      const found = values.filter((v): v is string => v !== null && v !== undefined).map(Number);
      return found.length ? Math.min(...found) : null;
    };
    if (rule.functionName === "count_per_interval") {
      const [row] = await q.select({ n: sql<number>`count(*)::int`, reset: resetOf(transactionIntents.createdAt) }).from(transactionIntents).where(recent);
      const [ops] = await q.select({ n: sql<number>`count(*)::int`, reset: resetOf(sponsoredOperations.createdAt) }).from(sponsoredOperations).where(recentOps);
      const count = (row?.n ?? 0) + (ops?.n ?? 0);
      const passed = count < rule.countLimit!;
      checks.add({
        ...base,
        passed,
        remaining: String(Math.max(rule.countLimit! - count, 0)),
        resetsAt: count > 0 ? earliest(row?.reset, ops?.reset) : null,
        reason: passed
          ? `${count} of ${rule.countLimit} sponsored transaction(s) per ${window} used by ${subject}`
          : `${rule.countLimit} sponsored transaction(s) per ${window} reached for ${subject}`,
      });
    } else if (rule.functionName === "gas_per_interval") {
      // Landed intents count what they cost; the others what they may cost at most.
      const [row] = await q
        .select({ spent: sql<string>`coalesce(sum(coalesce(${transactionIntents.gasCost}, ${transactionIntents.maxCost})::numeric), 0)::text`, reset: resetOf(transactionIntents.createdAt) })
        .from(transactionIntents)
        .where(recent);
      const [ops] = await q
        .select({ spent: sql<string>`coalesce(sum(${sponsoredOperations.maxCost}::numeric), 0)::text`, reset: resetOf(sponsoredOperations.createdAt) })
        .from(sponsoredOperations)
        .where(recentOps);
      const spent = BigInt(row?.spent ?? "0") + BigInt(ops?.spent ?? "0");
      const passed = spent + request.maxCost <= limit;
      checks.add({
        ...base,
        passed,
        remaining: (spent < limit ? limit - spent : 0n).toString(),
        resetsAt: earliest(row?.reset, ops?.reset),
        reason: passed
          ? `gas of ${spent} wei already sponsored in ${window} plus up to ${request.maxCost} wei is within ${limit} wei for ${subject}`
          : `gas of ${spent} wei already sponsored in ${window} plus up to ${request.maxCost} wei exceeds ${limit} wei for ${subject}`,
      });
    }
  }
}

/** Our paymaster never signs an unbounded operation: without a per-operation rule of the policy's own, the install's cap. */
export function maxCostCheck(checks: Checks, policy: PolicyRow, rules: PolicyRuleRow[], request: SponsorshipRequest) {
  // A policy sponsored by a registered paymaster spends that paymaster's money, under that service's own limits.
  if (policy.paymasterId) return;
  const ownCap = rules.some((r) => (r.type === "rate_limit" && r.functionName === "gas_per_transaction") || (r.type === "budget" && r.scope === "operation"));
  if (ownCap) return;
  const cap = sponsorMaxCost();
  const passed = request.maxCost <= cap;
  checks.add({
    rule: null,
    type: "max_cost",
    code: "max_cost_exceeded",
    passed,
    remaining: cap.toString(),
    reason: passed
      ? `${mostCost(request)}, within the ${cap} wei per operation this service sponsors when a policy has no per-operation limit (SPONSOR_MAX_COST_WEI)`
      : `${mostCost(request)}, over the ${cap} wei per operation this service sponsors when a policy has no gas_per_transaction rule or budget per operation (SPONSOR_MAX_COST_WEI)`,
  });
}

/**
 * What an operation may cost, with where it comes from: its gas limits (all of them, the paymaster's validation counted
 * as the EntryPoint counts it) at its maxFeePerGas, which follows the chain's base fee (twice it, plus the tip).
 */
function mostCost(request: SponsorshipRequest): string {
  const fee = request.maxFeePerGas;
  if (!fee) return `the operation may cost up to ${request.maxCost} wei`;
  return `the operation may cost up to ${request.maxCost} wei (${request.maxCost / fee} gas at up to ${fee} wei per gas)`;
}

const PERIOD_WORDS: Record<string, string> = { day: "today (UTC)", week: "this week (UTC, from Monday)", month: "this month (UTC)", total: "in total" };

/** Budgets: what the operation may cost, added to what the scope used in the period, within the amount. */
export async function budgetChecks(checks: Checks, q: Queryable, policy: PolicyRow, rules: PolicyRuleRow[], request: SponsorshipRequest) {
  const price = request.usdPrice ?? null;
  for (const rule of rules.filter((r) => r.type === "budget")) {
    const base = { rule: rule.id, type: rule.type, code: "budget_exhausted" as const };
    const usd = rule.currency === "usd";
    const show = (v: bigint) => (usd ? `$${showAmount(rule, v)}` : `${showAmount(rule, v)} wei`);
    // Nothing to value yet (an ERC-7677 stub, before the op's gas is known): only what is used already counts.
    if (usd && price === null && request.maxCost > 0n) {
      checks.add({ ...base, passed: false, reason: `the budget is in USD and chain ${request.chainId} has no USD price now, so this operation's cost cannot be counted against it` });
      continue;
    }
    const cost = usd ? (price === null ? 0n : weiToUsdMicros(request.maxCost, price)) : request.maxCost;
    const limit = budgetLimit(rule);
    if (rule.scope === "operation") {
      const passed = cost <= limit;
      checks.add({
        ...base,
        passed,
        remaining: showAmount(rule, limit),
        reason: `the operation may cost up to ${show(cost)}, ${passed ? "within" : "over"} the budget of ${show(limit)} per operation`,
      });
      continue;
    }
    const use = await budgetUse(q, policy, rule, subjectOf(policy, request), clockOf(request), price);
    const passed = use.used + cost <= limit;
    checks.add({
      ...base,
      passed,
      remaining: use.remaining,
      resetsAt: use.resetsAt,
      reason: `${show(use.used)} of the ${show(limit)} budget used ${PERIOD_WORDS[rule.period ?? "total"]} by ${use.whom}; this operation may cost up to ${show(cost)}${passed ? "" : ", more than is left"}`,
    });
  }
}
