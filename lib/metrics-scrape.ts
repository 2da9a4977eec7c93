import { count, inArray, sql } from "drizzle-orm";
import { Gauge } from "prom-client";
import { getDbHandle } from "@/lib/db/client";
import { chainLandings, functionRuns, transactionIntents } from "@/lib/db/schema";
import { latestReconciliations } from "@/lib/follower/reconcile";
import { metrics } from "@/lib/metrics";
import { coverage } from "@/lib/sponsorship/coverage";
import { processSingleton } from "@/lib/singleton";

/**
 * The gauges of shared state, read from the database when scraped (so every instance reports the
 * same totals): runs waiting or executing per function, intents not yet settled per status, the
 * service's PostgreSQL connections by state, and per chain the paymaster's deposit against the
 * projects' sponsorship balances (the deposit from a cache of its chain reads).
 */
function create() {
  const registers = [metrics.registry];
  return {
    runs: new Gauge({ name: "runner_queue_depth", help: "Background runs queued (due or later) or running, and events waiting for a batch (batched), per function, in the database", labelNames: ["function", "state"], registers }),
    intents: new Gauge({ name: "transaction_intents_unsettled", help: "Intents not yet landed or failed, per status, in the database", labelNames: ["status"], registers }),
    connections: new Gauge({ name: "database_connections", help: "Connections to this database by state (every instance's: the pool's use)", labelNames: ["state"], registers }),
    deposit: new Gauge({ name: "sponsorship_paymaster_deposit_wei", help: "Our paymaster's EntryPoint deposit per chain, as last read (cached SPONSORSHIP_DEPOSIT_CACHE_SECONDS)", labelNames: ["chain"], registers }),
    balances: new Gauge({ name: "sponsorship_project_balances_wei", help: "What all projects may still spend per chain: the sum of their sponsorship balances' available + held", labelNames: ["chain"], registers }),
    covered: new Gauge({ name: "sponsorship_deposit_covered", help: "1 when the paymaster's deposit covers the projects' balances on the chain, 0 when not (absent when the deposit could not be read)", labelNames: ["chain"], registers }),
    unattributed: new Gauge({
      name: "sponsorship_unattributed_wei_total",
      help: "actualGasCost our paymasters paid, since the ledger began, for operations no signature of ours answers for (the operator's), per chain",
      labelNames: ["chain"],
      registers,
    }),
    mismatch: new Gauge({
      name: "sponsorship_reconcile_mismatch_wei",
      help: "The latest reconciliation's chain sum of actualGasCost less the ledger's settlements and unattributed spend, per chain and paymaster (0: the ledger is the chain)",
      labelNames: ["chain", "paymaster"],
      registers,
    }),
    stale: new Gauge({ name: "sponsorship_stale_holds", help: "Holds the latest reconciliation found held for signatures that can no longer land, per chain", labelNames: ["chain"], registers }),
  };
}

const gauges = processSingleton("scrapeGauges", create);

const UNSETTLED = ["awaiting_signature", "pending", "broadcast"] as const;

/** The metrics in Prometheus's text format, the database-read gauges refreshed first. */
export async function scrapeMetrics(): Promise<{ body: string; contentType: string }> {
  const { db, embedded } = await getDbHandle();
  const [runs, intents, connections, chains, unattributed, reconciled] = await Promise.all([
    db
      .select({
        functionId: functionRuns.functionId,
        state: sql<string>`case when ${functionRuns.status} = 'running' then 'running' when ${functionRuns.status} = 'batched' then 'batched' when ${functionRuns.runAt} <= now() then 'due' else 'later' end`,
        n: count(),
      })
      .from(functionRuns)
      .where(inArray(functionRuns.status, ["batched", "queued", "running"]))
      .groupBy(sql`1, 2`),
    db
      .select({ status: transactionIntents.status, n: count() })
      .from(transactionIntents)
      .where(inArray(transactionIntents.status, [...UNSETTLED]))
      .groupBy(transactionIntents.status),
    embedded
      ? Promise.resolve([])
      : db.execute<{ state: string | null; n: number }>(sql`select coalesce(state, 'unknown') as state, count(*)::int as n from pg_stat_activity where datname = current_database() group by 1`),
    // Deposits from their cache: scrapes in a burst read each chain once.
    coverage(db),
    db
      .select({ chainId: chainLandings.chainId, wei: sql<string>`coalesce(sum(${chainLandings.actualGasCost}), 0)::text` })
      .from(chainLandings)
      .where(sql`${chainLandings.projectId} is null and ${chainLandings.status} = 'settled'`)
      .groupBy(chainLandings.chainId),
    latestReconciliations(db),
  ]);
  gauges.runs.reset();
  for (const r of runs) gauges.runs.set({ function: r.functionId, state: r.state }, r.n);
  gauges.intents.reset();
  for (const status of UNSETTLED) gauges.intents.set({ status }, intents.find((i) => i.status === status)?.n ?? 0);
  gauges.connections.reset();
  for (const c of connections as { state: string | null; n: number }[]) gauges.connections.set({ state: c.state ?? "unknown" }, Number(c.n));
  gauges.deposit.reset();
  gauges.balances.reset();
  gauges.covered.reset();
  for (const c of chains) {
    const chain = String(c.chainId);
    gauges.balances.set({ chain }, Number(c.balances));
    if (c.deposit !== null) gauges.deposit.set({ chain }, Number(c.deposit));
    if (c.covered !== null) gauges.covered.set({ chain }, c.covered ? 1 : 0);
  }
  gauges.unattributed.reset();
  for (const c of chains) gauges.unattributed.set({ chain: String(c.chainId) }, Number(unattributed.find((u) => u.chainId === c.chainId)?.wei ?? 0));
  gauges.mismatch.reset();
  gauges.stale.reset();
  for (const r of reconciled) {
    gauges.mismatch.set({ chain: String(r.chainId), paymaster: r.paymaster }, Number(r.mismatchWei));
    gauges.stale.set({ chain: String(r.chainId) }, r.staleHolds);
  }
  return { body: await metrics.registry.metrics(), contentType: metrics.registry.contentType };
}
