import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from "prom-client";
import { processSingleton } from "@/lib/singleton";

/**
 * The process's Prometheus metrics (`GET /metrics`). Counters and histograms are recorded where
 * things happen (the request pipeline, the runner, the relayer, deliveries); gauges that describe
 * shared state (runs queued, intents by status, database connections) are read from the database
 * at scrape time (lib/metrics-scrape.ts), so every instance reports the same totals for them.
 */
function create() {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  const seconds = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
  return {
    registry,
    requests: new Counter({ name: "http_requests_total", help: "API requests by operation and status", labelNames: ["operation", "status"], registers: [registry] }),
    requestSeconds: new Histogram({ name: "http_request_duration_seconds", help: "API request latency by operation", labelNames: ["operation"], buckets: seconds, registers: [registry] }),
    intents: new Counter({ name: "transaction_intents_total", help: "Transaction intents by outcome as this process recorded it (created, landed, failed)", labelNames: ["outcome"], registers: [registry] }),
    landSeconds: new Histogram({
      name: "transaction_intent_land_seconds",
      help: "Time from an intent's creation to its landing on chain",
      buckets: [0.5, 1, 2, 3, 5, 10, 20, 30, 60, 120, 300],
      registers: [registry],
    }),
    // Where an intent's time goes, stage by stage (npm run bench prints p50/p95 of each): accept = the whole POST,
    // build = its op's gas estimation, sign = sponsorship and signatures, queue = recorded until a relay run takes it,
    // bundle = taken until its bundle is mined, land = mined until recorded, confirm = recorded until confirmed.
    intentStageSeconds: new Histogram({
      name: "transaction_intent_stage_seconds",
      help: "Time an intent spent in each stage: accept, build, sign, queue, bundle, land, confirm",
      labelNames: ["stage"],
      buckets: [0.001, 0.0025, 0.005, 0.01, 0.015, 0.02, 0.03, 0.04, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.5, 0.75, 1, 1.5, 2, 3, 5, 10, 30],
      registers: [registry],
    }),
    dbStatements: new Counter({ name: "db_statements_total", help: "SQL statements this process sent to the database", registers: [registry] }),
    bundleOps: new Histogram({ name: "relay_bundle_ops", help: "User operations per bundle sent by the relayer", labelNames: ["chain"], buckets: [1, 2, 4, 8, 16, 32, 64], registers: [registry] }),
    executorBalance: new Gauge({ name: "relay_executor_balance_wei", help: "Balance of each relay executor, as last read", labelNames: ["chain", "executor"], registers: [registry] }),
    pendingOps: new Gauge({ name: "relay_pending_ops", help: "User operations waiting for a bundle in this process, per chain", labelNames: ["chain"], registers: [registry] }),
    runs: new Counter({ name: "runner_runs_total", help: "Background function executions by function and outcome (completed, failed, retry, sleeping)", labelNames: ["function", "outcome"], registers: [registry] }),
    runSeconds: new Histogram({ name: "runner_execution_seconds", help: "Time a background function executed before it ended, slept or was retried", labelNames: ["function"], buckets: seconds, registers: [registry] }),
    takeovers: new Counter({ name: "runner_lease_takeovers_total", help: "Runs taken over from a process whose lease expired", labelNames: ["function"], registers: [registry] }),
    deliveries: new Counter({ name: "deliveries_total", help: "Webhook and trigger delivery attempts by kind and outcome", labelNames: ["kind", "outcome"], registers: [registry] }),
    reorgs: new Counter({ name: "chain_reorgs_total", help: "Reorgs the chain follower found (a block it had read left the chain)", labelNames: ["chain"], registers: [registry] }),
  };
}

type Metrics = ReturnType<typeof create>;

/** One set per process (`next dev` may evaluate this module more than once). */
export const metrics: Metrics = processSingleton("metrics", create);

export function observeRequest(operation: string, status: number, durationMs: number) {
  metrics.requests.inc({ operation, status: String(status) });
  metrics.requestSeconds.observe({ operation }, durationMs / 1000);
}
