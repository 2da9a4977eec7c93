// `npm run bench [-- pipeline|intents]`: a production server (`next start`) on a fresh anvil chain, on the embedded
// PGlite, or on a fresh database of the PostgreSQL server at DATABASE_URL. "pipeline": throughput and latency of the
// request pipeline; "intents": sponsored transaction intents next to the same ops sent directly (bench/intents.ts).
// Both by default. BENCH_CLIENTS (32) concurrent clients; BENCH_REQUESTS (2000) per pipeline scenario,
// BENCH_INTENTS (500) ops per intents run.
import { runCli, startServer } from "../test/server";
import { benchIntents } from "./intents";
import { apiClient, describeDatabase, envInt, now, pool, quantile, startBenchChain } from "./lib";

const CLIENTS = envInt("BENCH_CLIENTS", 32);
const REQUESTS = envInt("BENCH_REQUESTS", 2000);
const INTENTS = envInt("BENCH_INTENTS", 500);

interface Scenario {
  name: string;
  request: (i: number) => { path: string; init: RequestInit };
}

async function run(base: string, scenario: Scenario, total: number) {
  const latencies: number[] = [];
  let errors = 0;
  const started = now();
  await pool(CLIENTS, total, async (i) => {
    const { path, init } = scenario.request(i);
    const t0 = now();
    const res = await fetch(base + path, init);
    await res.arrayBuffer();
    latencies.push(now() - t0);
    if (res.status !== 200) errors++;
  });
  const seconds = (now() - started) / 1000;
  return { total, seconds, rps: total / seconds, p50: quantile(latencies, 0.5), p99: quantile(latencies, 0.99), errors };
}

async function benchPipeline(base: string, secret: string, database: string) {
  const auth = { authorization: `Bearer ${secret}` };
  const form = { ...auth, "content-type": "application/x-www-form-urlencoded" };
  const scenarios: Scenario[] = [
    { name: "POST /v1/players (form)", request: (i) => ({ path: "/v1/players", init: { method: "POST", headers: form, body: `name=p${i}&metadata[level]=${i % 10}` } }) },
    {
      name: "POST /v1/players (JSON, Idempotency-Key)",
      request: (i) => ({
        path: "/v1/players",
        init: { method: "POST", headers: { ...auth, "content-type": "application/json", "idempotency-key": `bench-${i}` }, body: JSON.stringify({ name: `j${i}` }) },
      }),
    },
    { name: "GET /v1/players?limit=10", request: () => ({ path: "/v1/players?limit=10", init: { headers: auth } }) },
  ];
  await run(base, scenarios[2]!, 200); // warm up
  console.log(`\nRequest pipeline: ${database}, ${CLIENTS} concurrent clients, ${REQUESTS} requests each scenario\n`);
  console.log("scenario                                   req/s   p50 ms   p99 ms  errors");
  for (const scenario of scenarios) {
    const r = await run(base, scenario, REQUESTS);
    console.log(
      `${scenario.name.padEnd(40)} ${r.rps.toFixed(0).padStart(7)} ${r.p50.toFixed(1).padStart(8)} ${r.p99.toFixed(1).padStart(8)} ${String(r.errors).padStart(7)}`,
    );
  }
}

async function main() {
  const only = process.argv[2];
  if (only !== undefined && only !== "pipeline" && only !== "intents") throw new Error(`usage: npm run bench [-- pipeline|intents]`);
  process.env.RATE_LIMIT_PER_SECOND = "0"; // measure the pipeline, not the limiter
  const chain = await startBenchChain();
  try {
    const server = await startServer();
    try {
      const database = describeDatabase(server.env);
      const secret = (name: string) => JSON.parse(runCli(server, ["project", "create", "--name", name, "--json"])).keys.test.secret as string;
      if (only !== "intents") await benchPipeline(server.url, secret("bench pipeline"), database);
      if (only !== "pipeline") await benchIntents(apiClient(server.url, secret("bench intents")), chain.chain, { clients: CLIENTS, intents: INTENTS, database });
    } finally {
      await server.stop();
    }
  } finally {
    await chain.stop();
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
