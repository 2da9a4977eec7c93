import { count, inArray, sql } from "drizzle-orm";
import { Gauge } from "prom-client";
import { getDbHandle } from "@/lib/db/client";
import { functionRuns, transactionIntents } from "@/lib/db/schema";
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
  };
}

const gauges = processSingleton("scrapeGauges", create);

const UNSETTLED = ["awaiting_signature", "pending", "broadcast"] as const;

/** The metrics in Prometheus's text format, the database-read gauges refreshed first. */
export async function scrapeMetrics(): Promise<{ body: string; contentType: string }> {
  const { db, embedded } = await getDbHandle();
  const [runs, intents, connections, chains] = await Promise.all([
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
  return { body: await metrics.registry.metrics(), contentType: metrics.registry.contentType };
}
