import { and, eq, gte, inArray, ne, or, sql } from "drizzle-orm";
import type { Address } from "viem";
import type { Tx } from "@/lib/db/client";
import { sponsoredOperations, transactionIntents } from "@/lib/db/schema";
import { ApiError } from "@/lib/http/errors";
import type { PolicyRuleRow } from "./rules";
import { ALL_FUNCTIONS } from "./schema";
import type { PolicyRow } from "./service";

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
  /** Rate limits count per player; a developer account's intents (no player) count per account. */
  playerId: string | null;
  accountId: string;
  chainId: number;
  calls: RuledCall[];
  /** The most the operation may cost, in wei (gas limits × maxFeePerGas). */
  maxCost: bigint;
  /**
   * An operation signed over ERC-7677: its sender and nonce. Asking again for the same nonce replaces its earlier
   * record (only one op of a nonce can land), so that record is not counted against it.
   */
  operation?: { sender: Address; nonce: bigint };
}

/**
 * The most one operation sponsored by our paymaster may cost (its prefund: gas limits × maxFeePerGas) when its policy
 * has no gas_per_transaction rule: SPONSOR_MAX_COST_WEI, default 10^16 wei (0.01 of the native coin). A policy's own
 * gas_per_transaction rule replaces it, higher or lower.
 */
export const DEFAULT_MAX_COST_WEI = 10n ** 16n;
export function sponsorMaxCost(): bigint {
  const raw = process.env.SPONSOR_MAX_COST_WEI?.trim();
  return raw && /^\d{1,78}$/.test(raw) ? BigInt(raw) : DEFAULT_MAX_COST_WEI;
}

const INTERVAL_SQL: Record<string, string> = { minute: "minutes", hour: "hours", day: "days", week: "weeks", month: "months" };

export const policyRefused = (policy: PolicyRow, message: string, rule?: PolicyRuleRow) =>
  new ApiError(400, "invalid_request_error", `Policy ${policy.id} does not sponsor this intent: ${message}`, {
    policy: { value: policy.id, message: rule ? `refused by rule ${rule.id}: ${message}` : message },
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

/** The policy's state, chain and call rules (no counting): checked before anything costly is done for a request. */
export function checkPolicyAllows(policy: PolicyRow, rules: PolicyRuleRow[], request: Pick<SponsorshipRequest, "chainId" | "calls">): void {
  if (policy.deleted) throw policyRefused(policy, "the policy is deleted");
  if (!policy.enabled) throw policyRefused(policy, "the policy is disabled");
  if (policy.chainId !== request.chainId) throw policyRefused(policy, `the policy is for chain ${policy.chainId}, the intent for chain ${request.chainId}`);

  for (const call of request.calls) {
    if (!rules.some((rule) => ruleAllows(rule, call))) throw policyRefused(policy, `no rule allows ${describeCall(call)}`);
  }
}

/**
 * Decides whether the policy sponsors the request; throws a 400 naming the refusing rule
 * otherwise. Must run inside the transaction that records the intent, which it serializes per
 * policy and player so concurrent intents cannot both slip under a limit.
 */
export async function evaluateSponsorship(tx: Tx, policy: PolicyRow, rules: PolicyRuleRow[], request: SponsorshipRequest): Promise<void> {
  checkPolicyAllows(policy, rules, request);

  const limits = rules.filter((r) => r.type === "rate_limit");
  // Our paymaster never signs an unbounded operation: without a rule of the policy's own, the install's default cap.
  // A policy sponsored by a registered paymaster spends that paymaster's money, under that service's own limits.
  if (!policy.paymasterId && !limits.some((r) => r.functionName === "gas_per_transaction")) {
    const cap = sponsorMaxCost();
    if (request.maxCost > cap) {
      throw policyRefused(
        policy,
        `the operation may cost up to ${request.maxCost} wei, over the ${cap} wei per operation this service sponsors when a policy has no gas_per_transaction rule (SPONSOR_MAX_COST_WEI)`,
      );
    }
  }
  if (limits.length === 0) return;
  const subject = request.playerId ?? request.accountId;
  await tx.execute(sql`select pg_advisory_xact_lock(hashtext(${`${policy.id}:${subject}`}))`);
  for (const rule of limits) {
    const limit = BigInt(rule.gasLimit ?? 0);
    if (rule.functionName === "gas_per_transaction") {
      if (request.maxCost > limit) throw policyRefused(policy, `the operation may cost up to ${request.maxCost} wei, over the ${limit} wei per transaction`, rule);
      continue;
    }
    const recent = and(
      eq(transactionIntents.policyId, policy.id),
      request.playerId ? eq(transactionIntents.playerId, request.playerId) : eq(transactionIntents.accountId, request.accountId),
      eq(transactionIntents.sponsored, true),
      inArray(transactionIntents.status, ["awaiting_signature", "pending", "broadcast", "successful", "failed"]),
      gte(transactionIntents.createdAt, sql`now() - ${windowOf(rule)}::interval`),
    );
    // Operations signed over ERC-7677 count as well: by player, else by the account (an outside sender by address).
    const op = request.operation;
    const recentOps = and(
      eq(sponsoredOperations.policyId, policy.id),
      request.playerId ? eq(sponsoredOperations.playerId, request.playerId) : eq(sql`coalesce(${sponsoredOperations.accountId}, ${sponsoredOperations.sender})`, request.accountId),
      gte(sponsoredOperations.createdAt, sql`now() - ${windowOf(rule)}::interval`),
      op ? or(ne(sponsoredOperations.sender, op.sender.toLowerCase()), ne(sponsoredOperations.nonce, op.nonce.toString()), ne(sponsoredOperations.chainId, request.chainId)) : undefined,
    );
    if (rule.functionName === "count_per_interval") {
      const [row] = await tx.select({ n: sql<number>`count(*)::int` }).from(transactionIntents).where(recent);
      const [ops] = await tx.select({ n: sql<number>`count(*)::int` }).from(sponsoredOperations).where(recentOps);
      if ((row?.n ?? 0) + (ops?.n ?? 0) >= rule.countLimit!) {
        throw policyRefused(policy, `${rule.countLimit} sponsored transaction(s) per ${windowOf(rule)} reached for ${subject}`, rule);
      }
    } else if (rule.functionName === "gas_per_interval") {
      // Landed intents count what they cost; the others what they may cost at most.
      const [row] = await tx
        .select({ spent: sql<string>`coalesce(sum(coalesce(${transactionIntents.gasCost}, ${transactionIntents.maxCost})::numeric), 0)::text` })
        .from(transactionIntents)
        .where(recent);
      const [ops] = await tx
        .select({ spent: sql<string>`coalesce(sum(${sponsoredOperations.maxCost}::numeric), 0)::text` })
        .from(sponsoredOperations)
        .where(recentOps);
      const spent = BigInt(row?.spent ?? "0") + BigInt(ops?.spent ?? "0");
      if (spent + request.maxCost > limit) {
        throw policyRefused(policy, `gas of ${spent} wei already sponsored in ${windowOf(rule)} plus up to ${request.maxCost} wei exceeds ${limit} wei for ${subject}`, rule);
      }
    }
  }
}
