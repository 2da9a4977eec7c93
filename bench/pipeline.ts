// The request pipeline: our routes next to the framework floor (GET /healthz: a route handler returning constant
// JSON, no authentication, no database), measured in the same run with the same client.
import { request } from "./http";
import { cpuMeter, now, pool, quantile, type CpuGroups } from "./lib";

interface Scenario {
  name: string;
  request: (i: number) => { path: string; method?: string; headers?: Record<string, string>; body?: string };
}

export interface PipelineResult {
  name: string;
  rps: number;
  p50: number;
  p99: number;
  errors: number;
  /** CPU milliseconds per request, by process group (server, PostgreSQL, the client). */
  cpuMs: Record<string, number>;
}

/** Request numbers, distinct over all runs (names and idempotency keys never repeat). */
let sequence = 0;

async function run(base: string, scenario: Scenario, total: number, clients: number, groups: CpuGroups): Promise<PipelineResult> {
  const latencies: number[] = [];
  let errors = 0;
  const cpu = cpuMeter(groups);
  const started = now();
  await pool(clients, total, async () => {
    const { path, ...init } = scenario.request(sequence++);
    const t0 = now();
    const res = await request(base + path, init);
    latencies.push(now() - t0);
    if (res.status !== 200) errors++;
  });
  const seconds = (now() - started) / 1000;
  const cpuMs = Object.fromEntries(Object.entries(cpu()).map(([group, s]) => [group, (1000 * s) / total]));
  return { name: scenario.name, rps: total / seconds, p50: quantile(latencies, 0.5), p99: quantile(latencies, 0.99), errors, cpuMs };
}

export const FRAMEWORK_FLOOR = "GET /healthz (framework floor)";
export const GET_PLAYERS = "GET /v1/players?limit=10";
export const POST_PLAYERS = "POST /v1/players (form)";

/** Each scenario `requests` times from `clients` concurrent clients, the framework floor first; the results by name. */
export async function benchPipeline(base: string, secret: string, options: { clients: number; requests: number; database: string; cpu: CpuGroups }) {
  const auth = { authorization: `Bearer ${secret}` };
  const form = { ...auth, "content-type": "application/x-www-form-urlencoded" };
  const scenarios: Scenario[] = [
    { name: FRAMEWORK_FLOOR, request: () => ({ path: "/healthz" }) },
    { name: GET_PLAYERS, request: () => ({ path: "/v1/players?limit=10", headers: auth }) },
    { name: POST_PLAYERS, request: (i) => ({ path: "/v1/players", method: "POST", headers: form, body: `name=p${i}&metadata[level]=${i % 10}` }) },
    {
      name: "POST /v1/players (JSON, Idempotency-Key)",
      request: (i) => ({
        path: "/v1/players",
        method: "POST",
        headers: { ...auth, "content-type": "application/json", "idempotency-key": `bench-${i}` },
        body: JSON.stringify({ name: `j${i}` }),
      }),
    },
  ];
  // Warm-up: every route compiled and its caches filled before anything is timed.
  for (const scenario of scenarios) await run(base, scenario, 200, options.clients, options.cpu);
  console.log(`\nRequest pipeline: ${options.database}, ${options.clients} concurrent keep-alive clients (node:http), ${options.requests} requests each scenario\n`);
  const groups = ["client", ...Object.keys(options.cpu)];
  console.log(`${"scenario".padEnd(42)}   req/s   p50 ms   p99 ms  errors  ÷ floor   CPU ms per request: ${groups.join(" / ")}`);
  const results = new Map<string, PipelineResult>();
  for (const scenario of scenarios) {
    const r = await run(base, scenario, options.requests, options.clients, options.cpu);
    results.set(r.name, r);
    const floor = results.get(FRAMEWORK_FLOOR)!;
    console.log(
      `${scenario.name.padEnd(42)} ${r.rps.toFixed(0).padStart(7)} ${r.p50.toFixed(1).padStart(8)} ${r.p99.toFixed(1).padStart(8)} ${String(r.errors).padStart(7)} ${(r.rps / floor.rps).toFixed(2).padStart(8)}   ${groups.map((g) => (r.cpuMs[g] ?? 0).toFixed(2)).join(" / ")}`,
    );
  }
  return results;
}
