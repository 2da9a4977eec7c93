// The dashboard's Sponsorship page and the policy page's budgets: reads of the project's sponsorship ledger in one mode
// that the API has no list for (spend per day, top spenders, declines by reason, every budget's use). Each is scoped
// with inScope, bounded in time (an index on (project, mode, createdAt) narrows it) and in rows.
import { and, asc, eq, gte, inArray, isNotNull, lt, lte, ne, or, sql } from "drizzle-orm";
import { findChain, supportedChains } from "@/lib/chain/registry";
import { latestReconciliations } from "@/lib/follower/reconcile";
import type { Queryable } from "@/lib/db/client";
import { players, policies, policyRules, sponsorshipDeclines, sponsorshipEntries } from "@/lib/db/schema";
import { inScope } from "@/lib/db/scope";
import { budgetUsages } from "@/lib/policies/usage";
import { describeRule } from "@/lib/policies/purposes";
import { serializePolicyRule } from "@/lib/policies/serializer";
import type { ProjectContext } from "@/lib/tenant";
import { budgetLimit, usdMicros } from "@/lib/sponsorship/budgets";
import { DECLINE_CODES, type DeclineCode } from "@/lib/sponsorship/declines";

/** Spend per day and declines by reason cover this many UTC days, today included. */
export const RECENT_DAYS = 30;
/** The top spending players shown per chain. */
export const TOP_PLAYERS = 10;
/** The budget rules listed at most (a mode with more shows the first, oldest policies first). */
export const MAX_BUDGETS = 100;

const DAY_MS = 86_400_000;

/** A UTC calendar day, YYYY-MM-DD. */
export type Day = string;
const dayOf = (ms: number): Day => new Date(ms).toISOString().slice(0, 10);
const startOfDay = (at: Date) => Date.UTC(at.getUTCFullYear(), at.getUTCMonth(), at.getUTCDate());

/** The last RECENT_DAYS UTC days, today included: [from, to] as days, and [start, end) as instants. */
export function recentDays(now = new Date()) {
  const end = startOfDay(now) + DAY_MS;
  const start = end - RECENT_DAYS * DAY_MS;
  return { from: dayOf(start), to: dayOf(end - DAY_MS), start: new Date(start), end: new Date(end) };
}

/** The UTC calendar month of `now`: its name (YYYY-MM) and [start, end). */
export function monthOf(now = new Date()) {
  const start = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1));
  const end = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1));
  return { month: start.toISOString().slice(0, 7), start, end };
}

/** Sums of settlements: wei, and dollars (at each hold's price) when every one of them had a price. */
export interface Spent {
  /** Wei, a decimal integer string. */
  wei: string;
  /** Dollars, a decimal string; null when some settlement's chain had no USD price then. */
  usd: string | null;
  /** How many operations settled. */
  operations: number;
}

// Settlements less their reversals (a landing a reorg removed): each reversal counts against its own day.
const signed = (column: typeof sponsorshipEntries.amount | typeof sponsorshipEntries.usd) => sql`case ${sponsorshipEntries.kind} when 'reversal' then -${column} else ${column} end`;
const settledWei = sql<string>`coalesce(sum(${signed(sponsorshipEntries.amount)}), 0)::text`;
// numeric sums keep the 6 places of each entry's usd; null unless every entry summed had one.
const settledUsd = sql<string | null>`case when count(${sponsorshipEntries.usd}) = count(*) then sum(${signed(sponsorshipEntries.usd)})::text end`;
const settledCount = sql<number>`(count(*) filter (where ${sponsorshipEntries.kind} = 'settle') - count(*) filter (where ${sponsorshipEntries.kind} = 'reversal'))::int`;
/** Settle entries and the reversals of settle entries (not a deposit's reversal: it undoes a credit). */
const settlements = or(eq(sponsorshipEntries.kind, "settle"), and(eq(sponsorshipEntries.kind, "reversal"), ne(sponsorshipEntries.cause, "deposit")));

export interface SpendChain {
  chainId: number;
  name: string;
  symbol: string;
  /** Days with settlements only, oldest first. */
  days: (Spent & { day: Day })[];
  total: Spent;
}

// The UTC day a settlement was recorded (its operation landed and was confirmed then).
const settledDay = sql<string>`to_char(${sponsorshipEntries.createdAt} at time zone 'UTC', 'YYYY-MM-DD')`;

/** What landed operations cost per UTC day of the last RECENT_DAYS, per chain: the ledger's settle entries. */
export async function spendPerDay(db: Queryable, ctx: ProjectContext, now = new Date()): Promise<{ from: Day; to: Day; chains: SpendChain[] }> {
  const range = recentDays(now);
  const rows = await db
    .select({ chainId: sponsorshipEntries.chainId, day: settledDay, wei: settledWei, usd: settledUsd, operations: settledCount })
    .from(sponsorshipEntries)
    .where(inScope(sponsorshipEntries, ctx, settlements, gte(sponsorshipEntries.createdAt, range.start), lt(sponsorshipEntries.createdAt, range.end)))
    .groupBy(sponsorshipEntries.chainId, settledDay)
    .orderBy(asc(sponsorshipEntries.chainId), asc(settledDay));
  const chains = [...new Set(rows.map((r) => r.chainId))].map((chainId): SpendChain => {
    const days = rows.filter((r) => r.chainId === chainId).map(({ day, wei, usd, operations }) => ({ day, wei, usd, operations }));
    const usd = days.every((d) => d.usd !== null) ? sumDollars(days.map((d) => d.usd!)) : null;
    return {
      chainId,
      name: findChain(chainId)?.name ?? `Chain ${chainId}`,
      symbol: findChain(chainId)?.nativeCurrency.symbol ?? "ETH",
      days,
      total: { wei: days.reduce((n, d) => n + BigInt(d.wei), 0n).toString(), usd, operations: days.reduce((n, d) => n + d.operations, 0) },
    };
  });
  return { from: range.from, to: range.to, chains };
}

/** Dollar strings added exactly (to the micro-dollar, the ledger's precision). */
function sumDollars(values: string[]): string {
  const micros = values.reduce((n, v) => n + usdMicros(v), 0n);
  return `${micros / 1_000_000n}.${(micros % 1_000_000n).toString().padStart(6, "0")}`;
}

/** Every day of the range, zero on days without settlements: the chart's points (coin and dollars as numbers). */
export function spendSeries(range: { from: Day; to: Day }, chain: Pick<SpendChain, "days">, decimals = 18): { day: Day; spent: number; usd: number | null }[] {
  const byDay = new Map(chain.days.map((d) => [d.day, d]));
  const priced = chain.days.every((d) => d.usd !== null);
  const points = [];
  for (let ms = Date.parse(`${range.from}T00:00:00Z`); ms <= Date.parse(`${range.to}T00:00:00Z`); ms += DAY_MS) {
    const day = byDay.get(dayOf(ms));
    points.push({ day: dayOf(ms), spent: day ? Number(BigInt(day.wei)) / 10 ** decimals : 0, usd: priced ? (day ? Number(day.usd) : 0) : null });
  }
  return points;
}

export interface TopPlayer extends Spent {
  player: { id: string; name: string | null };
}

/**
 * The players whose operations cost the most this UTC month (settled), TOP_PLAYERS per chain: coins of different
 * chains are not added up. Operations without a player (developer accounts, outside ERC-7677 senders) are left out.
 */
export async function topSpenders(db: Queryable, ctx: ProjectContext, now = new Date(), limit = TOP_PLAYERS): Promise<{ month: string; chains: { chainId: number; players: TopPlayer[] }[] }> {
  const { month, start, end } = monthOf(now);
  const ranked = db
    .select({
      chainId: sponsorshipEntries.chainId,
      playerId: sql<string>`${sponsorshipEntries.playerId}`.as("player_id"),
      wei: settledWei.as("wei"),
      usd: settledUsd.as("usd"),
      operations: settledCount.as("operations"),
      rank: sql<number>`row_number() over (partition by ${sponsorshipEntries.chainId} order by sum(${signed(sponsorshipEntries.amount)}) desc, ${sponsorshipEntries.playerId})`.as("rank"),
    })
    .from(sponsorshipEntries)
    .where(
      inScope(
        sponsorshipEntries,
        ctx,
        settlements,
        isNotNull(sponsorshipEntries.playerId),
        gte(sponsorshipEntries.createdAt, start),
        lt(sponsorshipEntries.createdAt, end),
      ),
    )
    .groupBy(sponsorshipEntries.chainId, sponsorshipEntries.playerId)
    .as("ranked");
  const rows = await db.select().from(ranked).where(lte(ranked.rank, limit)).orderBy(asc(ranked.chainId), asc(ranked.rank));
  const ids = [...new Set(rows.map((r) => r.playerId))];
  const names = new Map(
    ids.length ? (await db.select({ id: players.id, name: players.name }).from(players).where(inScope(players, ctx, inArray(players.id, ids)))).map((p) => [p.id, p.name]) : [],
  );
  const chains = [...new Set(rows.map((r) => r.chainId))].map((chainId) => ({
    chainId,
    players: rows
      .filter((r) => r.chainId === chainId)
      .map((r): TopPlayer => ({ player: { id: r.playerId, name: names.get(r.playerId) ?? null }, wei: r.wei, usd: r.usd, operations: r.operations })),
  }));
  return { month, chains };
}

export interface DeclineReason {
  code: DeclineCode | string;
  count: number;
  /** The latest of them (Unix seconds). */
  lastAt: number;
}

/** The refusals to sponsor of the last RECENT_DAYS, by decline code, most frequent first. */
export async function declinesByReason(db: Queryable, ctx: ProjectContext, now = new Date()): Promise<{ from: Day; to: Day; total: number; reasons: DeclineReason[] }> {
  const range = recentDays(now);
  const rows = await db
    .select({ code: sponsorshipDeclines.code, count: sql<number>`count(*)::int`, lastAt: sql<number>`floor(extract(epoch from max(${sponsorshipDeclines.createdAt})))::float8` })
    .from(sponsorshipDeclines)
    .where(inScope(sponsorshipDeclines, ctx, gte(sponsorshipDeclines.createdAt, range.start), lt(sponsorshipDeclines.createdAt, range.end)))
    .groupBy(sponsorshipDeclines.code)
    .orderBy(sql`count(*) desc`, asc(sponsorshipDeclines.code))
    .limit(DECLINE_CODES.length * 2);
  const reasons = rows.map((r) => ({ code: r.code, count: r.count, lastAt: Number(r.lastAt) }));
  return { from: range.from, to: range.to, total: reasons.reduce((n, r) => n + r.count, 0), reasons };
}

/** One budget rule's use, as the budget tables show it. Amounts are in the rule's unit: wei, or dollars. */
export interface BudgetRow {
  rule: string;
  policy: { id: string; name: string; chainId: number; enabled: boolean };
  /** The rule in words (as the policy page says it). */
  description: string;
  scope: string;
  period: string;
  unit: "wei" | "usd";
  /** The native coin of the policy's chain (a native budget's unit). */
  symbol: string;
  limit: string;
  /** Used in the current period; null for a per-operation budget, or a per-player/account one without a subject. */
  used: string | null;
  remaining: string | null;
  /** used / limit (1 is all of it); null as used. */
  share: number | null;
  /** The current period's start and when it resets (Unix seconds); null for total and per-operation budgets. */
  periodStart: number | null;
  resetsAt: number | null;
  /** Whose use is shown: the policy, player or account id; null when none. */
  subject: string | null;
}

/** Whose use per-player and per-account budgets show: ids from the page's query, only when they look like ones. */
export function budgetSubject(query: { player?: string; account?: string }): { player?: string; account?: string } {
  const id = (value: string | undefined, ...prefixes: string[]) => (value && value.length <= 100 && prefixes.some((p) => value.startsWith(p)) ? value : undefined);
  return { player: id(query.player, "pla_"), account: id(query.account, "acc_", "dac_") };
}

/**
 * The budget rules of the mode's policies (deleted policies' left out), or of one policy, each with its use in its
 * current period on the policy chain's clock (per player or account: the subject's, when named).
 */
export async function budgetRows(db: Queryable, ctx: ProjectContext, options: { policy?: string; player?: string; account?: string } = {}): Promise<BudgetRow[]> {
  const rows = await db
    .select({ rule: policyRules, policy: { id: policies.id, name: policies.name, chainId: policies.chainId, enabled: policies.enabled } })
    .from(policies)
    .innerJoin(policyRules, eq(policyRules.policyId, policies.id))
    .where(
      and(
        inScope(policies, ctx, eq(policies.deleted, false), options.policy ? eq(policies.id, options.policy) : undefined),
        eq(policyRules.type, "budget"),
        // The rule's own tenant too: a rule is always its policy's, and the condition costs nothing.
        inScope(policyRules, ctx),
      ),
    )
    .orderBy(asc(policies.createdAt), asc(policies.id), asc(policyRules.createdAt), asc(policyRules.id))
    .limit(MAX_BUDGETS);
  const usages = await budgetUsages(
    db,
    ctx,
    rows.map((r) => r.rule),
    { player: options.player, account: options.account },
  );
  return rows.map(({ rule, policy }): BudgetRow => {
    const usage = usages.get(rule.id)!;
    const unit = rule.currency === "usd" ? "usd" : "wei";
    const symbol = findChain(policy.chainId)?.nativeCurrency.symbol ?? "ETH";
    const limit = budgetLimit(rule);
    const used = usage.used === null ? null : unit === "usd" ? usdMicros(usage.used) : BigInt(usage.used);
    return {
      rule: rule.id,
      policy,
      description: describeRule(serializePolicyRule(rule), symbol),
      scope: rule.scope ?? "policy",
      period: rule.period ?? "total",
      unit,
      symbol,
      limit: rule.amount ?? "0",
      used: usage.used,
      remaining: usage.remaining,
      share: used === null ? null : limit === 0n ? 1 : Number((used * 10_000n) / limit) / 10_000,
      periodStart: usage.periodStart,
      resetsAt: usage.resetsAt,
      subject: usage.subject,
    };
  });
}

/** The ledger filters the page's query string names, as the API takes them (empty ones left out). */
export const LEDGER_FILTERS = ["chainId", "kind", "cause", "policy", "player", "account", "intent"] as const;
export type LedgerFilters = Partial<Record<(typeof LEDGER_FILTERS)[number], string>>;

export function ledgerFilters(query: Record<string, string | string[] | undefined>): LedgerFilters {
  const filters: LedgerFilters = {};
  for (const name of LEDGER_FILTERS) {
    const value = query[name];
    const first = (Array.isArray(value) ? value[0] : value)?.trim();
    if (first) filters[name] = first;
  }
  return filters;
}

/** A chain's latest reconciliation of the ledger with it, as the project's page shows it: when, how far, and whether it balanced. */
export interface ChainBooks {
  chainId: number;
  /** The last block reconciled, and when (Unix seconds); null: not reconciled in the last day. */
  toBlock: number | null;
  at: number | null;
  /** The install's ledger equals the chain there (no mismatch, nothing unattributed, no stale hold); null: not reconciled. */
  balanced: boolean | null;
}

/**
 * The background reconciliation of each chain of the mode: install-wide (every project's ledger against our
 * paymasters), so only whether it balanced is shown, never another project's amounts.
 */
export async function chainBooks(db: Queryable, ctx: ProjectContext): Promise<ChainBooks[]> {
  const rows = await latestReconciliations(db);
  return supportedChains()
    .filter((c) => c.livemode === ctx.livemode)
    .map((chain): ChainBooks => {
      const mine = rows.filter((r) => r.chainId === chain.chainId);
      if (mine.length === 0) return { chainId: chain.chainId, toBlock: null, at: null, balanced: null };
      return {
        chainId: chain.chainId,
        toBlock: Math.min(...mine.map((r) => r.toBlock)),
        at: Math.floor(Math.min(...mine.map((r) => r.createdAt.getTime())) / 1000),
        balanced: mine.every((r) => r.mismatchWei === "0" && r.unattributedEvents === 0 && r.staleHolds === 0),
      };
    });
}
