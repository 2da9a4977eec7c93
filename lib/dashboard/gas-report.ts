import { asc, eq, gte, isNotNull, lt, sql } from "drizzle-orm";
import { formatUnits } from "viem";
import { findChain } from "@/lib/chain/registry";
import type { Queryable } from "@/lib/db/client";
import { policies, transactionIntents } from "@/lib/db/schema";
import { inScope } from "@/lib/db/scope";
import { badRequest, referenced } from "@/lib/errors";
import { inUsd } from "@/lib/policies/reports";
import { getPolicy } from "@/lib/policies/service";
import type { ProjectContext } from "@/lib/tenant";

export const DEFAULT_RANGE_DAYS = 30;
/** A year and a leap day: enough for a yearly report, small enough for one chart and table. */
export const MAX_RANGE_DAYS = 366;
const DAY_MS = 86_400_000;

/** A UTC calendar day, YYYY-MM-DD. */
export type Day = string;

export interface GasAmounts {
  intents: number;
  /** Gas units, as a decimal string. */
  gasUsed: string;
  feeWei: string;
  /** The fee in the chain's native coin (ETH, POL…), as a decimal string. */
  feeNative: string;
  /** Null when the chain has no `CHAIN_<id>_USD_PRICE`. */
  feeUsd: string | null;
}

export interface GasReportChain {
  chainId: number;
  name: string;
  symbol: string;
  /** Days with landed intents only, oldest first. */
  days: (GasAmounts & { day: Day })[];
  totals: GasAmounts;
}

export interface GasReport {
  from: Day;
  to: Day;
  /** Null: every policy of the project and mode. */
  policy: { id: string; name: string } | null;
  /** One entry a chain with landed intents in the range (policies of all chains can be reported together). */
  chains: GasReportChain[];
}

export interface GasReportQuery {
  policy?: string;
  from?: string;
  to?: string;
}

const shown = (value: string) => (value.length > 40 ? `${value.slice(0, 40)}…` : value);

function parseDay(value: string, name: "from" | "to"): number {
  const ms = /^\d{4}-\d{2}-\d{2}$/.test(value) ? Date.parse(`${value}T00:00:00Z`) : NaN;
  // Date.parse rolls 2026-02-30 over to March; a day that does not print back as itself is no date.
  if (Number.isNaN(ms) || new Date(ms).toISOString().slice(0, 10) !== value) {
    throw badRequest(`The ${name} date '${shown(value)}' is not a date written as YYYY-MM-DD.`, { [name]: { value: shown(value), message: "must be a date as YYYY-MM-DD" } });
  }
  return ms;
}

const dayOf = (ms: number): Day => new Date(ms).toISOString().slice(0, 10);

/**
 * The report's UTC days from the page's query string: the last 30 days (today included) by
 * default, a missing end defaulting to today and a missing start to 30 days before the end.
 */
export function reportRange(query: { from?: string; to?: string }, now = new Date()): { from: Day; to: Day } {
  const to = query.to ? parseDay(query.to, "to") : Date.parse(`${dayOf(now.getTime())}T00:00:00Z`);
  const from = query.from ? parseDay(query.from, "from") : to - (DEFAULT_RANGE_DAYS - 1) * DAY_MS;
  if (from > to) {
    throw badRequest(`The date range starts (${dayOf(from)}) after it ends (${dayOf(to)}): pick a start on or before the end.`, {
      from: { value: dayOf(from), message: "must not be after to" },
    });
  }
  const days = (to - from) / DAY_MS + 1;
  if (days > MAX_RANGE_DAYS) {
    throw badRequest(`The date range covers ${days} days; a report covers at most ${MAX_RANGE_DAYS}. Pick a shorter range.`, {
      from: { value: dayOf(from), message: `at most ${MAX_RANGE_DAYS} days before to` },
    });
  }
  return { from: dayOf(from), to: dayOf(to) };
}

/** The project and mode's policies to report on, deleted ones included: their intents and gas stay. */
export async function reportablePolicies(db: Queryable, ctx: ProjectContext) {
  return db
    .select({ id: policies.id, name: policies.name, chainId: policies.chainId, deleted: policies.deleted })
    .from(policies)
    .where(inScope(policies, ctx))
    .orderBy(asc(policies.createdAt), asc(policies.id));
}

function amounts(chainId: number, decimals: number, intents: number, gasUsed: bigint, feeWei: bigint): GasAmounts {
  return { intents, gasUsed: gasUsed.toString(), feeWei: feeWei.toString(), feeNative: formatUnits(feeWei, decimals), feeUsd: inUsd(chainId, feeWei) };
}

// The UTC day an intent was created: the service stores no landing time (only the block number),
// and the API's /v1/policies/{id}/reports counts by creation day too, so both agree.
const createdDay = sql<string>`to_char(${transactionIntents.createdAt} at time zone 'UTC', 'YYYY-MM-DD')`;

/**
 * Gas used and fees per UTC day of the landed (they have an actual gas cost), sponsored intents
 * of this project and mode under one policy, or under any policy, created within [from, to].
 */
export async function gasReport(db: Queryable, ctx: ProjectContext, query: GasReportQuery, now = new Date()): Promise<GasReport> {
  const range = reportRange(query, now);
  const policy = query.policy ? await referenced(getPolicy(db, ctx, query.policy), "policy", query.policy) : null;
  const rows = await db
    .select({
      chainId: transactionIntents.chainId,
      day: createdDay,
      intents: sql<number>`count(*)::int`,
      gasUsed: sql<string>`coalesce(sum(${transactionIntents.gasUsed}::numeric), 0)::text`,
      fee: sql<string>`sum(${transactionIntents.gasCost}::numeric)::text`,
    })
    .from(transactionIntents)
    .where(
      inScope(
        transactionIntents,
        ctx,
        policy ? eq(transactionIntents.policyId, policy.id) : isNotNull(transactionIntents.policyId),
        isNotNull(transactionIntents.gasCost),
        gte(transactionIntents.createdAt, new Date(`${range.from}T00:00:00Z`)),
        lt(transactionIntents.createdAt, new Date(Date.parse(`${range.to}T00:00:00Z`) + DAY_MS)),
      ),
    )
    .groupBy(transactionIntents.chainId, createdDay)
    .orderBy(asc(transactionIntents.chainId), asc(createdDay));

  const chains = [...new Set(rows.map((row) => row.chainId))].map((chainId): GasReportChain => {
    const config = findChain(chainId);
    const decimals = config?.nativeCurrency.decimals ?? 18;
    const own = rows.filter((row) => row.chainId === chainId);
    // numeric sums of integers print without a fraction, so BigInt takes them as they are.
    const sum = (of: (row: (typeof own)[number]) => string) => own.reduce((total, row) => total + BigInt(of(row)), 0n);
    return {
      chainId,
      name: config?.name ?? `Chain ${chainId}`,
      symbol: config?.nativeCurrency.symbol ?? "ETH",
      days: own.map((row) => ({ day: row.day, ...amounts(chainId, decimals, row.intents, BigInt(row.gasUsed), BigInt(row.fee)) })),
      totals: amounts(chainId, decimals, own.reduce((n, row) => n + row.intents, 0), sum((row) => row.gasUsed), sum((row) => row.fee)),
    };
  });
  return { ...range, policy: policy && { id: policy.id, name: policy.name }, chains };
}

/** Every day of the range with the chain's fee (in the native coin) and gas, zero on days without intents: the chart's points. */
export function dailySeries(report: Pick<GasReport, "from" | "to">, chain: Pick<GasReportChain, "days">): { day: Day; fee: number; gasUsed: number }[] {
  const byDay = new Map(chain.days.map((d) => [d.day, d]));
  const series = [];
  for (let ms = Date.parse(`${report.from}T00:00:00Z`); ms <= Date.parse(`${report.to}T00:00:00Z`); ms += DAY_MS) {
    const day = byDay.get(dayOf(ms));
    series.push({ day: dayOf(ms), fee: day ? Number(day.feeNative) : 0, gasUsed: day ? Number(day.gasUsed) : 0 });
  }
  return series;
}

const usdFormat = new Intl.NumberFormat("en-US", { style: "currency", currency: "USD", minimumFractionDigits: 2, maximumFractionDigits: 6 });

/** "$0.42", or "—" when the chain has no USD price. */
export const formatUsd = (usd: string | null) => (usd === null ? "—" : usdFormat.format(Number(usd)));

/** Gas units with thousands separators. */
export const formatGas = (gas: string) => BigInt(gas).toLocaleString("en-US");

/** The report's filters from a query string (the page's or the CSV link's); empty fields are defaults. */
export function gasReportQuery(params: URLSearchParams | Record<string, string | string[] | undefined>): GasReportQuery {
  const get = (name: string) => {
    const value = params instanceof URLSearchParams ? params.get(name) : params[name];
    const first = Array.isArray(value) ? value[0] : value;
    return first ? first : undefined;
  };
  return { policy: get("policy"), from: get("from"), to: get("to") };
}
