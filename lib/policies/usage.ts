// `expand=usage` on policy rules: each budget's use in its current period, what remains and when it resets.
import { findChain } from "@/lib/chain/registry";
import type { Queryable } from "@/lib/db/client";
import { log } from "@/lib/log";
import type { ProjectContext } from "@/lib/tenant";
import { budgetUsage, sponsorshipClock, type BudgetUsage } from "@/lib/sponsorship/budgets";
import { usdPrice } from "@/lib/sponsorship/prices";
import type { PolicyRuleRow } from "./rules";
import { getPolicy } from "./service";

/** Whose use a per-player or per-account budget shows (`player`, `account` on GET /v1/policy_rules/{id}). */
export interface UsageSubject {
  player?: string;
  account?: string;
}

/** The chain's clock and USD price, read before any query (a chain that does not answer: the wall clock, no price). */
async function chainNow(chainId: number): Promise<{ at: Date; price: number | null }> {
  const chain = findChain(chainId);
  if (!chain) return { at: new Date(), price: null };
  try {
    const [at, price] = await Promise.all([sponsorshipClock(chain), usdPrice(chain)]);
    return { at, price };
  } catch (err) {
    log.warn({ err, chainId }, "budget usage: the chain's clock could not be read; the wall clock is used");
    return { at: new Date(), price: await usdPrice(chain).catch(() => null) };
  }
}

/** Each budget rule's usage, by rule id (other rules have none). */
export async function budgetUsages(db: Queryable, ctx: ProjectContext, rows: PolicyRuleRow[], subject: UsageSubject = {}): Promise<Map<string, BudgetUsage>> {
  const out = new Map<string, BudgetUsage>();
  const budgets = rows.filter((r) => r.type === "budget");
  if (budgets.length === 0) return out;
  const policies = new Map(await Promise.all([...new Set(budgets.map((r) => r.policyId))].map(async (id) => [id, await getPolicy(db, ctx, id)] as const)));
  const clocks = new Map(await Promise.all([...new Set([...policies.values()].map((p) => p.chainId))].map(async (id) => [id, await chainNow(id)] as const)));
  for (const rule of budgets) {
    const policy = policies.get(rule.policyId)!;
    const { at, price } = clocks.get(policy.chainId)!;
    out.set(rule.id, await budgetUsage(db, policy, rule, subject, at, price));
  }
  return out;
}

/** The rules as shown (`shown`, in the order of `rows`), each budget with its `usage` when `expand` asks for it. */
export async function withUsage<T extends { id: string }>(
  db: Queryable,
  ctx: ProjectContext,
  rows: PolicyRuleRow[],
  shown: T[],
  expand: readonly string[] | undefined,
  subject: UsageSubject = {},
): Promise<(T & { usage?: BudgetUsage })[]> {
  if (!expand?.includes("usage")) return shown;
  const usages = await budgetUsages(db, ctx, rows, subject);
  return shown.map((rule) => (usages.has(rule.id) ? { ...rule, usage: usages.get(rule.id)! } : rule));
}
