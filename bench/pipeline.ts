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

/** One stretch of a scenario's requests: its latencies, time, errors and CPU seconds by process group. */
interface Sample {
  requests: number;
  latencies: number[];
  seconds: number;
  errors: number;
  cpu: Record<string, number>;
}

async function sample(base: string, scenario: Scenario, total: number, clients: number, groups: CpuGroups): Promise<Sample> {
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
  return { requests: total, latencies, seconds: (now() - started) / 1000, errors, cpu: cpu() };
}

/** A scenario's stretches as one result: requests over the time they took together, CPU per request. */
function summarize(name: string, samples: Sample[]): PipelineResult {
  const total = samples.reduce((n, s) => n + s.requests, 0);
  const seconds = samples.reduce((n, s) => n + s.seconds, 0);
  const latencies = samples.flatMap((s) => s.latencies);
  const cpuMs: Record<string, number> = {};
  for (const s of samples) for (const [group, cpu] of Object.entries(s.cpu)) cpuMs[group] = (cpuMs[group] ?? 0) + (1000 * cpu) / total;
  return { name, rps: total / seconds, p50: quantile(latencies, 0.5), p99: quantile(latencies, 0.99), errors: samples.reduce((n, s) => n + s.errors, 0), cpuMs };
}

/**
 * Stretches per scenario, taken in turns (floor, GET, POST, …, then again): the machine's speed drifts over a
 * run (other work on the host, the server's own background work), and taking turns lets every scenario meet
 * the same drift instead of the floor alone measuring a quiet or a busy minute.
 */
const ROUNDS = 4;

export const FRAMEWORK_FLOOR = "GET /healthz (framework floor)";
export const GET_PLAYERS = "GET /v1/players?limit=10";
export const POST_PLAYERS = "POST /v1/players (form)";

/** Each scenario `requests` times from `clients` concurrent clients, in turns with the framework floor; the results by name. */
export async function benchPipeline(
  base: string,
  secret: string,
  options: { clients: number; requests: number; database: string; cpu: CpuGroups; writeSecret: string },
) {
  const auth = { authorization: `Bearer ${secret}` };
  // The warm-up's players (400) go to the project the GET pages through; the timed ones to another, so that every
  // turn of the GET pages through the same project.
  let writer = auth;
  const scenarios: Scenario[] = [
    { name: FRAMEWORK_FLOOR, request: () => ({ path: "/healthz" }) },
    { name: GET_PLAYERS, request: () => ({ path: "/v1/players?limit=10", headers: auth }) },
    {
      name: POST_PLAYERS,
      request: (i) => ({
        path: "/v1/players",
        method: "POST",
        headers: { ...writer, "content-type": "application/x-www-form-urlencoded" },
        body: `name=p${i}&metadata[level]=${i % 10}`,
      }),
    },
    {
      name: "POST /v1/players (JSON, Idempotency-Key)",
      request: (i) => ({
        path: "/v1/players",
        method: "POST",
        headers: { ...writer, "content-type": "application/json", "idempotency-key": `bench-${i}` },
        body: JSON.stringify({ name: `j${i}` }),
      }),
    },
  ];
  // Warm-up: every route compiled and its caches filled before anything is timed.
  for (const scenario of scenarios) await sample(base, scenario, 200, options.clients, options.cpu);
  writer = { authorization: `Bearer ${options.writeSecret}` };
  console.log(
    `\nRequest pipeline: ${options.database}, ${options.clients} concurrent keep-alive clients (node:http), ${options.requests} requests each scenario ` +
      `in ${ROUNDS} turns`,
  );
  const samples = new Map<string, Sample[]>(scenarios.map((scenario) => [scenario.name, []]));
  for (let round = 0; round < ROUNDS; round++) {
    for (const scenario of scenarios) samples.get(scenario.name)!.push(await sample(base, scenario, Math.ceil(options.requests / ROUNDS), options.clients, options.cpu));
  }
  const groups = ["client", ...Object.keys(options.cpu)];
  console.log(`${"scenario".padEnd(42)}   req/s   p50 ms   p99 ms  errors  ÷ floor   CPU ms per request: ${groups.join(" / ")}`);
  const results = new Map<string, PipelineResult>();
  for (const scenario of scenarios) {
    const r = summarize(scenario.name, samples.get(scenario.name)!);
    results.set(r.name, r);
    const floor = results.get(FRAMEWORK_FLOOR)!;
    console.log(
      `${scenario.name.padEnd(42)} ${r.rps.toFixed(0).padStart(7)} ${r.p50.toFixed(1).padStart(8)} ${r.p99.toFixed(1).padStart(8)} ${String(r.errors).padStart(7)} ${(r.rps / floor.rps).toFixed(2).padStart(8)}   ${groups.map((g) => (r.cpuMs[g] ?? 0).toFixed(2)).join(" / ")}`,
    );
  }
  return results;
}
