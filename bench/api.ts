// `npm run bench`: throughput and latency of the request pipeline against a production server
// (`next start`) on the embedded PGlite, or on PostgreSQL when DATABASE_URL is set.
import { performance } from "node:perf_hooks";
import { runCli, startServer } from "../test/server";

const CLIENTS = Number(process.env.BENCH_CLIENTS ?? 32);
const REQUESTS = Number(process.env.BENCH_REQUESTS ?? 2000);

interface Scenario {
  name: string;
  request: (i: number) => { path: string; init: RequestInit };
}

const quantile = (sorted: number[], q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;

async function run(base: string, scenario: Scenario, total: number) {
  const latencies: number[] = [];
  let errors = 0;
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: CLIENTS }, async () => {
      for (let i = next++; i < total; i = next++) {
        const { path, init } = scenario.request(i);
        const t0 = performance.now();
        const res = await fetch(base + path, init);
        await res.arrayBuffer();
        latencies.push(performance.now() - t0);
        if (res.status !== 200) errors++;
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  latencies.sort((a, b) => a - b);
  return { total, seconds, rps: total / seconds, p50: quantile(latencies, 0.5), p99: quantile(latencies, 0.99), errors };
}

async function main() {
  process.env.RATE_LIMIT_PER_SECOND = "0"; // measure the pipeline, not the limiter
  const server = await startServer();
  try {
    const { keys } = JSON.parse(runCli(server, ["project", "create", "--name", "bench", "--json"]));
    const auth = { authorization: `Bearer ${keys.test.secret}` };
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
    await run(server.url, scenarios[2]!, 200); // warm up
    console.log(`\n${server.env.DATABASE_URL ? "PostgreSQL" : "embedded PGlite"}, ${CLIENTS} concurrent clients, ${REQUESTS} requests each scenario\n`);
    console.log("scenario                                   req/s   p50 ms   p99 ms  errors");
    for (const scenario of scenarios) {
      const r = await run(server.url, scenario, REQUESTS);
      console.log(
        `${scenario.name.padEnd(40)} ${r.rps.toFixed(0).padStart(7)} ${r.p50.toFixed(1).padStart(8)} ${r.p99.toFixed(1).padStart(8)} ${String(r.errors).padStart(7)}`,
      );
    }
  } finally {
    await server.stop();
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
