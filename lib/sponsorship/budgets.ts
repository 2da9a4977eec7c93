// Budget rules: how much of a budget a policy, player or account has used in its UTC period, by the ledger's holds.
// A hold counts at what it cost once settled, at its most while held, and not at all once released. Periods are UTC
// calendar days, weeks (from Monday) and months of the chain's clock (sponsorshipClock): the clock the paymaster's
// signature windows use, and the one a test moves with evm_increaseTime.
import { and, eq, gte, sql, type SQL } from "drizzle-orm";
import { latestBlock } from "@/lib/chain/coalesce";
import type { ChainConfig } from "@/lib/chain/registry";
import type { Queryable } from "@/lib/db/client";
import { sponsoredOperations, sponsorshipHolds } from "@/lib/db/schema";
import type { PolicyRuleRow } from "@/lib/policies/rules";
import type { PolicyRow } from "@/lib/policies/service";

/**
 * The clock of budgets and time windows on a chain: its latest block's timestamp, or the wall clock when that is later
 * (a development chain mines only when used, so its latest block can be hours old). Read it before a transaction and
 * pass the same instant to the evaluation and to the hold it allows.
 */
export async function sponsorshipClock(chain: ChainConfig): Promise<Date> {
  const block = await latestBlock(chain);
  return new Date(Math.max(Number(block.timestamp) * 1000, Date.now()));
}

export type BudgetPeriod = "day" | "week" | "month" | "total";

const DAY = 86_400_000;

/** The UTC calendar period containing `at`: [start, end); `total` has neither. A week starts on Monday. */
export function periodOf(period: BudgetPeriod, at: Date): { start: Date | null; end: Date | null } {
  const y = at.getUTCFullYear();
  const m = at.getUTCMonth();
  const day = Date.UTC(y, m, at.getUTCDate());
  switch (period) {
    case "day":
      return { start: new Date(day), end: new Date(day + DAY) };
    case "week": {
      const monday = day - ((at.getUTCDay() + 6) % 7) * DAY;
      return { start: new Date(monday), end: new Date(monday + 7 * DAY) };
    }
    case "month":
      return { start: new Date(Date.UTC(y, m, 1)), end: new Date(Date.UTC(y, m + 1, 1)) };
    case "total":
      return { start: null, end: null };
  }
}

/** Dollars as a decimal string ("2", "0.25") in micro-dollars; digits past the sixth decimal are dropped. */
export function usdMicros(dollars: string): bigint {
  const [whole = "0", frac = ""] = dollars.trim().split(".");
  return BigInt(whole || "0") * 1_000_000n + BigInt((frac + "000000").slice(0, 6));
}

/** Micro-dollars as dollars with 6 decimals ("1.250000"), the ledger's USD format. */
export function formatUsd(micros: bigint): string {
  const sign = micros < 0n ? "-" : "";
  const abs = micros < 0n ? -micros : micros;
  return `${sign}${abs / 1_000_000n}.${(abs % 1_000_000n).toString().padStart(6, "0")}`;
}

/** `wei` at `price` dollars per coin, in micro-dollars, rounded up (a budget never undercounts). */
export function weiToUsdMicros(wei: bigint, price: number): bigint {
  const [whole = "0", frac = ""] = price.toFixed(12).split(".");
  const pico = BigInt(whole) * 10n ** 12n + BigInt(frac.padEnd(12, "0").slice(0, 12)); // dollars × 10^12 per coin
  const scaled = wei * pico; // dollars × 10^30
  const unit = 10n ** 24n; // → micro-dollars
  return (scaled + unit - 1n) / unit;
}

/** Whom a budget's use is counted for: the operation's player (else its account), account and chain. */
export interface BudgetSubject {
  projectId: string;
  livemode: boolean;
  playerId: string | null;
  accountId: string;
  chainId: number;
  /**
   * An ERC-7677 operation asked for again (same sender and nonce): the hold of its earlier signature is replaced by
   * this one's (only one op of a nonce can land), so it is not counted against it.
   */
  operation?: { sender: string; nonce: bigint };
}

export interface BudgetUse {
  /** The limit and the use in the budget's unit: wei (native) or micro-dollars (usd). */
  limit: bigint;
  used: bigint;
  /** What is left before this operation, as the API shows it: wei, or dollars with 6 decimals. */
  remaining: string;
  /** When the period ends (Unix seconds); null for `total` budgets. */
  resetsAt: number | null;
  periodStart: Date | null;
  /** Who the use is counted for, in words ("player pla_…", "policy pol_…"). */
  whom: string;
}

export const budgetUnit = (rule: PolicyRuleRow) => (rule.currency === "usd" ? "usd" : "wei");
export const budgetLimit = (rule: PolicyRuleRow): bigint => (rule.currency === "usd" ? usdMicros(rule.amount ?? "0") : BigInt(rule.amount ?? "0"));
export const showAmount = (rule: PolicyRuleRow, value: bigint) => (rule.currency === "usd" ? formatUsd(value < 0n ? 0n : value) : (value < 0n ? 0n : value).toString());

/** A hold's spend: settled at its cost, held at its most, released at nothing. */
const spent = sql`(case ${sponsorshipHolds.status} when 'settled' then coalesce(${sponsorshipHolds.settledAmount}, 0) when 'held' then ${sponsorshipHolds.amount} else 0 end)`;

/**
 * The holds a budget counts: scope policy, the policy's; player, the player's under any policy of the project and mode
 * (on any chain for a USD budget, on the operation's chain for a native one); account, the account's under any policy.
 * A request without a player (a developer account's) counts a player budget by its account. Null for `operation`.
 */
export function budgetHolds(policy: PolicyRow, rule: PolicyRuleRow, subject: BudgetSubject): { where: SQL; whom: string; lockKey: string } | null {
  const tenant = and(eq(sponsorshipHolds.projectId, policy.projectId), eq(sponsorshipHolds.livemode, policy.livemode))!;
  const sameChain = rule.currency === "usd" ? undefined : eq(sponsorshipHolds.chainId, subject.chainId);
  switch (rule.scope) {
    case "policy":
      return { where: and(tenant, eq(sponsorshipHolds.policyId, policy.id))!, whom: `policy ${policy.id}`, lockKey: `budget:policy:${policy.id}` };
    case "player":
      if (subject.playerId) {
        return { where: and(tenant, eq(sponsorshipHolds.playerId, subject.playerId), sameChain)!, whom: `player ${subject.playerId}`, lockKey: `budget:player:${subject.playerId}` };
      }
    // falls through: no player, the account is the subject
    case "account":
      return { where: and(tenant, eq(sponsorshipHolds.accountId, subject.accountId))!, whom: `account ${subject.accountId}`, lockKey: `budget:account:${subject.accountId}` };
    default:
      return null;
  }
}

/**
 * How much of the budget is used in the period containing `at`. USD values come from each hold's price when held; a
 * hold without one counts at `price` when on the subject's chain (else nothing: its chain had no price).
 */
export async function budgetUse(db: Queryable, policy: PolicyRow, rule: PolicyRuleRow, subject: BudgetSubject, at: Date, price: number | null): Promise<BudgetUse> {
  const limit = budgetLimit(rule);
  const { start, end } = periodOf((rule.period ?? "total") as BudgetPeriod, at);
  const resetsAt = end ? Math.floor(end.getTime() / 1000) : null;
  const holds = budgetHolds(policy, rule, subject);
  if (!holds) {
    return { limit, used: 0n, remaining: showAmount(rule, limit), resetsAt: null, periodStart: null, whom: "each operation" };
  }
  const inPeriod = start ? gte(sponsorshipHolds.chainTime, sql`${start.toISOString()}::timestamptz`) : undefined;
  const total =
    rule.currency === "usd"
      ? sql<string>`coalesce(ceil(sum(${spent} * coalesce(${sponsorshipHolds.usdPrice}, case when ${sponsorshipHolds.chainId} = ${subject.chainId} then ${price === null ? null : String(price)}::numeric end, 0)) / 1000000000000), 0)::text`
      : sql<string>`coalesce(sum(${spent}), 0)::text`;
  const op = subject.operation;
  const replaced = op
    ? sql`not exists (select 1 from ${sponsoredOperations} where ${sponsoredOperations.id} = ${sponsorshipHolds.sponsoredOperationId} and ${sponsoredOperations.chainId} = ${subject.chainId} and ${sponsoredOperations.sender} = ${op.sender.toLowerCase()} and ${sponsoredOperations.nonce} = ${op.nonce.toString()})`
    : undefined;
  const [row] = await db.select({ used: total }).from(sponsorshipHolds).where(and(holds.where, inPeriod, replaced));
  const used = BigInt(row?.used ?? "0");
  return { limit, used, remaining: showAmount(rule, limit - used), resetsAt, periodStart: start, whom: holds.whom };
}

/** A budget rule's use as the API shows it (`expand=usage` on policy rules). */
export interface BudgetUsage {
  /** Used in the current period (wei, or dollars with 6 decimals); null when the budget is per player or account and none was named. */
  used: string | null;
  /** What is left of the amount; null as `used`. */
  remaining: string | null;
  /** The start of the current period and when it resets (Unix seconds, UTC on the chain's clock); null for `total`. */
  periodStart: number | null;
  resetsAt: number | null;
  /** Whose use is shown: the policy's, or the player's or account's named. */
  subject: string | null;
}

/**
 * A budget's use now (`at`: the policy chain's sponsorshipClock), for the policy, or for the player or account named
 * (`subject`). A per-operation budget has no use: all of it remains for each operation.
 */
export async function budgetUsage(
  db: Queryable,
  policy: PolicyRow,
  rule: PolicyRuleRow,
  subject: { player?: string; account?: string },
  at: Date,
  price: number | null,
): Promise<BudgetUsage> {
  const { start, end } = periodOf((rule.period ?? "total") as BudgetPeriod, at);
  const period = { periodStart: start && Math.floor(start.getTime() / 1000), resetsAt: end && Math.floor(end.getTime() / 1000) };
  if (rule.scope === "operation") return { used: null, remaining: showAmount(rule, budgetLimit(rule)), periodStart: null, resetsAt: null, subject: null };
  const who = rule.scope === "player" ? subject.player : rule.scope === "account" ? subject.account : policy.id;
  if (!who) return { used: null, remaining: null, ...period, subject: null };
  const use = await budgetUse(
    db,
    policy,
    rule,
    { projectId: policy.projectId, livemode: policy.livemode, playerId: rule.scope === "player" ? who : null, accountId: who, chainId: policy.chainId },
    at,
    price,
  );
  return { used: showAmount(rule, use.used), remaining: use.remaining, ...period, subject: who };
}
