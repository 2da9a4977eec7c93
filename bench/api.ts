// `npm run bench [-- pipeline|intents] [--instances N]`: a production server (`next start`) on fresh anvil chains,
// on the embedded PGlite, or on a fresh database of the PostgreSQL server at DATABASE_URL. "pipeline": throughput
// and latency of the request pipeline beside the framework floor (bench/pipeline.ts); "intents": sponsored
// transaction intents next to the same ops sent directly (bench/intents.ts): per run landed/s, latencies, ops per
// bundle, CPU per landed op by process group with SQL statements per landed intent beside it (the servers'
// db_statements_total; PostgreSQL's pg_stat_statements too when it is loaded), p50/p95 of each stage of an intent
// (transaction_intent_stage_seconds), then 50 POSTs at one client. Both by default, then the targets of issue 32
// (and, for reference, the ratios of issue 18's). `--instances N` (PostgreSQL only) also runs the intents over N
// servers on one database.
// BENCH_CLIENTS (32) concurrent clients; BENCH_REQUESTS (2000) per pipeline scenario, BENCH_INTENTS (300) ops per
// intents run; BENCH_EMBEDDED_IDLE_SECONDS (480) of idling before npm start's default has its memory read;
// BENCH_PROFILE=<dir> writes the server's CPU profile there (node --cpu-prof), summarized at the end. The servers
// get SPONSOR_MAX_COST_WEI=10^18 (1 coin) unless it is set: the default cap, 10^16, declines ops once anvil's base
// fee climbs under the runs.
import fs from "node:fs";
import path from "node:path";
import { parseArgs } from "node:util";
import { runCli, startServer, type RunningServer } from "../test/helpers/server";
import { benchIntents, type IntentSummary } from "./intents";
import { apiClient, describeDatabase, envInt, postgresPids, rssMb, sleep, sponsorshipCreditEnv, startBenchChain } from "./lib";
import { benchPipeline, FRAMEWORK_FLOOR, GET_PLAYERS, POST_PLAYERS } from "./pipeline";
import { printProfile } from "./profile";

const CLIENTS = envInt("BENCH_CLIENTS", 32);
const REQUESTS = envInt("BENCH_REQUESTS", 2000);
const INTENTS = envInt("BENCH_INTENTS", 300);
/** How long the fresh server idles before its memory is read: its background functions have run by then. */
const IDLE_MS = 15_000;
/** How long `npm start`'s default idles before its memory is read: V8 lets its heap grow for 5–8 minutes, then it stays flat. */
const EMBEDDED_IDLE_MS = envInt("BENCH_EMBEDDED_IDLE_SECONDS", 480) * 1000;
/** The servers' cap per sponsored op unless SPONSOR_MAX_COST_WEI is set: 1 coin (the tests' too, test/helpers/worker-setup.ts). */
const BENCH_SPONSOR_MAX_COST_WEI = "1000000000000000000";

function usage(): never {
  throw new Error("usage: npm run bench [-- pipeline|intents] [--instances N]");
}

async function main() {
  const { values, positionals } = parseArgs({ options: { instances: { type: "string", default: "1" } }, allowPositionals: true });
  const only = positionals[0];
  const instances = Number(values.instances);
  if (positionals.length > 1 || (only !== undefined && only !== "pipeline" && only !== "intents") || !Number.isInteger(instances) || instances < 1) usage();
  if (instances > 1 && !process.env.DATABASE_URL) throw new Error("--instances needs DATABASE_URL: instances share one PostgreSQL database");
  process.env.RATE_LIMIT_PER_SECOND = "0"; // measure the pipeline, not the limiter
  const profileDir = process.env.BENCH_PROFILE ? path.resolve(process.env.BENCH_PROFILE) : undefined;
  if (profileDir) fs.mkdirSync(profileDir, { recursive: true });

  const chain = await startBenchChain();
  const servers: RunningServer[] = [];
  let embedded: RunningServer | undefined;
  try {
    // Disjoint executor ranges, whatever the ports: each instance signs bundles with keys of its own.
    // And enough sponsorship balance for every run's intents (the ledger of issue 30): none is declined for money;
    // nor for the install's per-op cap, which anvil's base fee outgrows under load (a baseline run lost 72 at 10^16).
    const env = (i: number) => ({
      RELAY_EXECUTOR_OFFSET: String(1000 + 100 * i),
      SPONSOR_MAX_COST_WEI: process.env.SPONSOR_MAX_COST_WEI ?? BENCH_SPONSOR_MAX_COST_WEI,
      ...sponsorshipCreditEnv(),
    });
    const nodeArgs = profileDir ? ["--cpu-prof", `--cpu-prof-dir=${profileDir}`] : [];
    servers.push(await startServer(env(0), { nodeArgs }));
    for (let i = 1; i < instances; i++) servers.push(await startServer(env(i), { shareDatabaseOf: servers[0], nodeArgs }));
    const [server] = servers as [RunningServer];
    // `npm start` on a fresh machine (embedded PGlite, its own two chains, first start), idle beside the bench.
    embedded = await startServer({}, { embedded: true });
    await fetch(`${embedded.url}/v1/openapi.json`).then((res) => res.arrayBuffer()); // what npm start's readiness probe asks
    const embeddedSince = Date.now();
    await sleep(IDLE_MS);
    const idleMb = rssMb(server.pid());
    console.log(`Service memory, idle with two chains ${IDLE_MS / 1000} s after start: ${idleMb.toFixed(0)} MB RSS`);

    const database = describeDatabase(server.env);
    const secret = (name: string) => JSON.parse(runCli(server, ["project", "create", "--name", name, "--json"])).keys.test.secret as string;
    const cpu = { server: () => servers.map((s) => s.pid()), ...(process.env.DATABASE_URL ? { postgres: postgresPids } : {}), anvil: () => chain.pids };
    const pipeline = only !== "intents" ? await benchPipeline(server.url, secret("bench pipeline"), { clients: CLIENTS, requests: REQUESTS, database, cpu, writeSecret: secret("bench pipeline writes") }) : undefined;
    let intents: IntentSummary | undefined;
    if (only !== "pipeline") {
      const key = secret("bench intents");
      intents = await benchIntents(
        servers.map((s) => apiClient(s.url, key)),
        servers.map((s) => s.url),
        chain.chain,
        { clients: CLIENTS, intents: INTENTS, database, databaseUrl: server.env.DATABASE_URL, cpu },
      );
    }
    const endMb = rssMb(server.pid());
    const idleLeft = EMBEDDED_IDLE_MS - (Date.now() - embeddedSince);
    if (idleLeft > 0) {
      console.log(`\nWaiting ${Math.round(idleLeft / 1000)} s more before reading the memory of \`npm start\`'s default (BENCH_EMBEDDED_IDLE_SECONDS)`);
      await sleep(idleLeft);
    }
    const embeddedMb = rssMb(embedded.pid());
    console.log(`\n\`npm start\` (embedded PGlite, two chains of its own), first start, idle for ${Math.round((Date.now() - embeddedSince) / 1000)} s: ${embeddedMb.toFixed(0)} MB RSS`);

    const check = (what: string, value: number, target: number, atMost = false) =>
      console.log(`  ${(atMost ? value <= target : value >= target) ? "✓" : "✗"} ${what.padEnd(66)} ${value.toFixed(2).padStart(7)}  (${atMost ? "≤" : "≥"} ${target})`);
    console.log(`\nTargets (issue 32), this run:`);
    if (intents) {
      for (const run of intents.runs) {
        const name = run.label.replace(/^service:?\s*/, "");
        check(`server CPU per landed op, ms: ${name}`, run.serverCpuMs, 8, true);
        check(`total CPU per landed op ÷ floor's: ${name}`, run.totalCpuMs / run.floorTotalCpuMs, 2, true);
        check(`landed/s ÷ floor's: ${name}`, run.landedPerSecond / run.floorLandedPerSecond, 0.5);
        if (run.statementsPerOp !== undefined) check(`SQL statements per landed intent: ${name}`, run.statementsPerOp, 12, true);
        check(`mean ops per bundle: ${name}`, run.meanBundle, 20);
      }
      check(`POST p50 at one client, ms${process.env.DATABASE_URL ? "" : " (the target is PostgreSQL's)"}`, intents.oneClient.p50, 40, true);
      console.log(`  ${intents.notOnce === 0 ? "✓" : "✗"} ${"ops landed exactly once".padEnd(66)} ${String(intents.landedOnce).padStart(7)}  (${intents.notOnce} not)`);
    }
    check("service RSS idle, MB", idleMb, 300, true);
    check("`npm start` RSS idle (embedded PGlite), MB", embeddedMb, 300, true);
    check("service RSS after the bench, MB", endMb, 600, true);

    console.log(`\nEarlier targets (issue 18), for reference:`);
    if (intents) {
      check("landed/s ÷ floor, first op", intents.landed[0], 0.8);
      check("landed/s ÷ floor, deployed account", intents.landed[1], 0.8);
      check("POST p50 ÷ floor build-and-sign p50, first op", intents.submitP50[0], 1.5, true);
      check("POST p50 ÷ floor build-and-sign p50, deployed account", intents.submitP50[1], 1.5, true);
      check("POST → status=1 p50 ÷ floor's, first op", intents.landP50[0], 1.5, true);
      check("POST → status=1 p50 ÷ floor's, deployed account", intents.landP50[1], 1.5, true);
    }
    if (pipeline) {
      const floor = pipeline.get(FRAMEWORK_FLOOR)!.rps;
      check(`${GET_PLAYERS} req/s ÷ framework floor`, pipeline.get(GET_PLAYERS)!.rps / floor, 0.7);
      check(`${POST_PLAYERS} req/s ÷ framework floor`, pipeline.get(POST_PLAYERS)!.rps / floor, 0.5);
    }
  } finally {
    await embedded?.stop();
    for (const server of servers.slice(1)) await server.stop();
    await servers[0]?.stop();
    await chain.stop();
  }
  if (profileDir) printProfile(profileDir);
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
