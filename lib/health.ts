import { sql } from "drizzle-orm";
import { publicClient } from "@/lib/chain/clients";
import { supportedChains } from "@/lib/chain/registry";
import { getDb } from "@/lib/db/client";
import { jobRunnerHealth } from "@/lib/jobs/port";
import { isDraining } from "@/lib/shutdown";
import { latestReconciliations } from "@/lib/follower/reconcile";
import { coverage } from "@/lib/sponsorship/coverage";
import { processSingleton } from "@/lib/singleton";

const CHECK_TIMEOUT_MS = 2_000;
/** Readiness is cached this long: probes from every load balancer cost one check, not one each. */
const CACHE_MS = 1_000;

interface Check {
  ok: boolean;
  ms?: number;
  [detail: string]: unknown;
}

/**
 * ready: serve traffic. degraded: serve traffic (still 200), but the operator must act: our paymaster's deposit on
 * some chain no longer covers what the projects' sponsorship balances allow them to spend there (`uncovered` names
 * those chains; `npm run cli -- sponsorship status` shows the amounts), or the latest reconciliation of a chain found
 * the ledger is not the chain (`unbalanced`: unattributed spend or a mismatch; `npm run cli -- sponsorship reconcile`
 * shows which operations). not_ready: take this process out (503).
 */
export interface Readiness {
  status: "ready" | "degraded" | "not_ready";
  checks: { database: Check; chains: Record<string, Check>; runner: Check; shutdown: Check; sponsorship: Check; reconciliation: Check };
}

async function timed(check: () => Promise<Record<string, unknown>>): Promise<Check> {
  const started = performance.now();
  let timer: NodeJS.Timeout | undefined;
  try {
    const timeout = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error("timed out")), CHECK_TIMEOUT_MS)));
    const details = await Promise.race([check(), timeout]);
    return { ok: true, ms: Math.round(performance.now() - started), ...details };
  } catch (err) {
    // The reason without the error text: an RPC error carries its URL, which may carry a key.
    return { ok: false, ms: Math.round(performance.now() - started), error: err instanceof Error && err.message === "timed out" ? "timed out" : "unreachable" };
  } finally {
    clearTimeout(timer);
  }
}

async function check(): Promise<Readiness> {
  const chains = supportedChains();
  const [database, sponsorship, reconciled, ...chainChecks] = await Promise.all([
    timed(async () => {
      await (await getDb()).execute(sql`select 1`);
      return {};
    }),
    // The deposits come from their cache (lib/sponsorship/coverage.ts): a burst of probes reads each chain once.
    timed(async () => {
      const chainsCovered = await coverage(await getDb(), { chains });
      return { uncovered: chainsCovered.filter((c) => c.covered === false).map((c) => String(c.chainId)) };
    }),
    // The background reconciliation's latest rows (inngest/functions/reconcile.ts): no chain read here.
    timed(async () => {
      const rows = await latestReconciliations(await getDb());
      const off = rows.filter((r) => r.mismatchWei !== "0" || r.unattributedEvents > 0);
      return { unbalanced: [...new Set(off.map((r) => String(r.chainId)))] };
    }),
    ...chains.map((chain) => timed(async () => ({ block: Number(await publicClient(chain).getBlockNumber({ cacheTime: 0 })) }))),
  ]);
  const runner: Check = jobRunnerHealth();
  const shutdown: Check = { ok: !isDraining(), ...(isDraining() ? { draining: true } : {}) };
  const byChain = Object.fromEntries(chains.map((chain, i) => [String(chain.chainId), chainChecks[i]!]));
  const ok = database.ok && chainChecks.every((c) => c.ok) && runner.ok && shutdown.ok;
  // Only chains known to be short fail it: a coverage that could not be read (the database or a chain, each checked
  // above, or the check timing out: its `error`) degrades nothing by itself.
  const covered: Check = { ...sponsorship, ok: ((sponsorship.uncovered as string[] | undefined) ?? []).length === 0 };
  const reconciliation: Check = { ...reconciled, ok: ((reconciled.unbalanced as string[] | undefined) ?? []).length === 0 };
  const status = !ok ? "not_ready" : covered.ok && reconciliation.ok ? "ready" : "degraded";
  return { status, checks: { database, chains: byChain, runner, shutdown, sponsorship: covered, reconciliation } };
}

const state = processSingleton("readiness", () => ({ last: undefined as { at: number; result: Promise<Readiness> } | undefined }));

/**
 * Whether this process should get traffic: database reachable, each configured chain answering, the runner leasing,
 * not shutting down; and whether the operator must fund a paymaster deposit (degraded).
 */
export function readiness(now = Date.now()): Promise<Readiness> {
  const cached = state.last;
  if (cached && now - cached.at < CACHE_MS && !isDraining()) return cached.result;
  const result = check();
  state.last = { at: now, result };
  return result;
}
