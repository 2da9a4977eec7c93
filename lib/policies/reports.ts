import { and, asc, count, countDistinct, desc, eq, gte, isNotNull, lt, sql, type SQL } from "drizzle-orm";
import { formatEther } from "viem";
import { findChain } from "@/lib/chain/registry";
import type { Queryable } from "@/lib/db/client";
import { transactionIntents } from "@/lib/db/schema";
import { badRequest } from "@/lib/errors";
import type { ListParams } from "@/lib/http/list";
import { unixSeconds } from "@/lib/http/resource";
import type { ProjectContext } from "@/lib/tenant";
import { getPolicy, type PolicyRow } from "./service";
import { policyTokenTotals } from "./tokens";

const DAY_SECONDS = 86_400;
/** Each period embeds at most this many intents; reports/transaction_intents pages through all. */
const INTENTS_PER_PERIOD = 100;

export interface IntentGas {
  id: string;
  gasFee: string;
  gasPrice: string;
  gasUsed: string;
  gasFeeInUSD: string | null;
}

export interface PolicyReport {
  period: { start: number; end: number };
  averageTransactionFee: string;
  totalTransactionFee: string;
  totalTransactionFeeInUSD: string | null;
  totalTransactionFeeInCustomTokens: string;
  transactionIntents: IntentGas[];
}

/** Wei at the chain's configured USD price (`CHAIN_<id>_USD_PRICE`), or null when none is configured. */
export function inUsd(chainId: number, wei: bigint): string | null {
  const price = findChain(chainId)?.usdPrice;
  return price === null || price === undefined ? null : (Number(formatEther(wei)) * price).toFixed(6);
}

// Landed intents (they have an actual gas cost) sponsored under the policy.
const landedUnder = (policyId: string, ...conditions: (SQL | undefined)[]) =>
  and(eq(transactionIntents.policyId, policyId), isNotNull(transactionIntents.gasCost), ...conditions);

const dayStart = sql<number>`extract(epoch from date_trunc('day', ${transactionIntents.createdAt} at time zone 'UTC'))::bigint`;

type GasRow = { id: string; gasCost: string | null; gasUsed: string | null; createdAt: Date };

function intentGas(policy: PolicyRow, row: GasRow): IntentGas {
  const fee = BigInt(row.gasCost ?? "0");
  const used = BigInt(row.gasUsed ?? "0");
  return { id: row.id, gasFee: fee.toString(), gasPrice: (used === 0n ? 0n : fee / used).toString(), gasUsed: used.toString(), gasFeeInUSD: inUsd(policy.chainId, fee) };
}

const gasColumns = { id: transactionIntents.id, gasCost: transactionIntents.gasCost, gasUsed: transactionIntents.gasUsed, createdAt: transactionIntents.createdAt };

function report(policy: PolicyRow, start: number, end: number, n: number, total: bigint, tokens: bigint, intents: GasRow[]): PolicyReport {
  return {
    period: { start, end },
    averageTransactionFee: (n === 0 ? 0n : total / BigInt(n)).toString(),
    totalTransactionFee: total.toString(),
    totalTransactionFeeInUSD: inUsd(policy.chainId, total),
    totalTransactionFeeInCustomTokens: tokens.toString(),
    transactionIntents: intents.slice(0, INTENTS_PER_PERIOD).map((row) => intentGas(policy, row)),
  };
}

/** The policy's gas per UTC day with landed intents, newest first: fees in wei, USD and the policy's token. */
export async function policyReports(db: Queryable, ctx: ProjectContext, policyId: string, params: ListParams): Promise<{ rows: PolicyReport[]; total: number }> {
  const policy = await getPolicy(db, ctx, policyId);
  const [periods, [counted]] = await Promise.all([
    db
      .select({
        start: dayStart,
        n: sql<number>`count(*)::int`,
        total: sql<string>`sum(${transactionIntents.gasCost}::numeric)::text`,
        tokens: sql<string>`coalesce(sum(${transactionIntents.tokenCharge}::numeric) filter (where ${transactionIntents.status} = 'successful'), 0)::text`,
      })
      .from(transactionIntents)
      .where(landedUnder(policy.id))
      .groupBy(dayStart)
      .orderBy(params.order === "asc" ? asc(dayStart) : desc(dayStart))
      .limit(params.limit ?? 10)
      .offset(params.skip ?? 0),
    db.select({ total: countDistinct(dayStart) }).from(transactionIntents).where(landedUnder(policy.id)),
  ]);
  if (periods.length === 0) return { rows: [], total: counted?.total ?? 0 };
  const starts = periods.map((p) => Number(p.start));
  const intents = await db
    .select(gasColumns)
    .from(transactionIntents)
    .where(landedUnder(policy.id, gte(transactionIntents.createdAt, new Date(Math.min(...starts) * 1000)), lt(transactionIntents.createdAt, new Date((Math.max(...starts) + DAY_SECONDS) * 1000))))
    .orderBy(desc(transactionIntents.createdAt), desc(transactionIntents.id));
  const rows = periods.map((p) => {
    const start = Number(p.start);
    const inPeriod = intents.filter((row) => unixSeconds(row.createdAt) >= start && unixSeconds(row.createdAt) < start + DAY_SECONDS);
    return report(policy, start, start + DAY_SECONDS, p.n, BigInt(p.total), BigInt(p.tokens), inPeriod);
  });
  return { rows, total: counted?.total ?? 0 };
}

/** Gas of each landed intent under the policy created between `from` and `to` (Unix seconds, inclusive). */
export async function policyIntentGas(db: Queryable, ctx: ProjectContext, policyId: string, input: ListParams & { from?: number; to?: number }) {
  const policy = await getPolicy(db, ctx, policyId);
  if (input.from !== undefined && input.to !== undefined && input.from > input.to) {
    throw badRequest(`from (${input.from}) is after to (${input.to}).`, { from: { value: input.from, message: "must not be after to" } });
  }
  const where = landedUnder(
    policy.id,
    input.from !== undefined ? gte(transactionIntents.createdAt, new Date(input.from * 1000)) : undefined,
    input.to !== undefined ? lt(transactionIntents.createdAt, new Date((input.to + 1) * 1000)) : undefined,
  );
  const dir = input.order === "asc" ? asc : desc;
  const [rows, [counted]] = await Promise.all([
    db
      .select(gasColumns)
      .from(transactionIntents)
      .where(where)
      .orderBy(dir(transactionIntents.createdAt), dir(transactionIntents.id))
      .limit(input.limit ?? 10)
      .offset(input.skip ?? 0),
    db.select({ total: count() }).from(transactionIntents).where(where),
  ]);
  return { rows: rows.map((row) => intentGas(policy, row)), total: counted?.total ?? 0 };
}

/**
 * The policy's whole life as one report, with the tokens it collected (fixed_rate and
 * charge_custom_tokens), how many its withdrawals took, and how many are left to withdraw.
 */
export async function policyTokenReport(db: Queryable, ctx: ProjectContext, policyId: string) {
  const policy = await getPolicy(db, ctx, policyId);
  const [[totals], intents, tokens] = await Promise.all([
    db
      .select({ n: sql<number>`count(*)::int`, total: sql<string>`coalesce(sum(${transactionIntents.gasCost}::numeric), 0)::text` })
      .from(transactionIntents)
      .where(landedUnder(policy.id)),
    db.select(gasColumns).from(transactionIntents).where(landedUnder(policy.id)).orderBy(desc(transactionIntents.createdAt), desc(transactionIntents.id)).limit(INTENTS_PER_PERIOD),
    policyTokenTotals(db, policy.id),
  ]);
  const base = report(policy, unixSeconds(policy.createdAt), Math.floor(Date.now() / 1000), totals?.n ?? 0, BigInt(totals?.total ?? "0"), tokens.collected, intents);
  return {
    ...base,
    withdrawnInCustomTokens: tokens.withdrawn.toString(),
    availableInCustomTokens: (tokens.collected - tokens.withdrawn).toString(),
  };
}
