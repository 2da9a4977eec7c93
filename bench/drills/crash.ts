// `npm run drill -- crash`: a steady stream of sponsored intents, and the subscription deliveries they cause, while
// the server is SIGKILLed at random moments (restarted at once each time), anvil is restarted once and the server's
// PostgreSQL connections are cut once. Then: every accepted intent landed exactly once, every event reached the
// receiver under its one id, no background run is left orphaned, and the project's sponsorship ledger adds up: nothing
// left held, settlements = the ops' actualGasCost on chain, each intent's hold settled or released once (./ledger).
import postgres from "postgres";
import type { RunningServer } from "../../test/helpers/server";
import { now, sleep } from "../lib";
import { checkDeliveries, checkLandings, failedRuns, intentRows, orphanedRuns, printTable, publishedEvents, relayRunsOf, settle, unfinishedRuns, verdict } from "./checks";
import { describeErrors } from "./client";
import { checkLedger, LEDGER_SETTLE_MS, settleLedger } from "./ledger";
import { blockNumber, intentBody, setupProject, startDrillChain, startDrillServer, startReceiver, subscribe, tempDir, type DrillChain, type Fixture } from "./setup";

const TOPICS = ["transaction_intent.broadcast", "transaction_intent.successful", "transaction_intent.failed"];

interface Options {
  kills: number;
  players: number;
  clients: number;
  /** Intents a second the clients aim at while the server is up. */
  rate: number;
  /** How long the stream goes on after the last restart, and the most the drill then waits for everything to settle. */
  tailMs: number;
  settleMs: number;
}

const FULL: Options = { kills: 12, players: 8, clients: 4, rate: 6, tailMs: 10_000, settleMs: 300_000 };
const SHORT: Options = { kills: 3, players: 4, clients: 3, rate: 4, tailMs: 3_000, settleMs: 180_000 };

const randomMs = (min: number, max: number) => min + Math.random() * (max - min);

/** Cuts every connection the server holds to its database, as a failover or a restarted PostgreSQL would. */
async function cutDatabaseConnections(server: RunningServer): Promise<number> {
  const url = new URL(server.env.DATABASE_URL!);
  const database = url.pathname.slice(1);
  url.pathname = "/postgres"; // from outside the server's database, so this connection is not among those cut
  const sql = postgres(url.toString(), { max: 1, onnotice: () => {} });
  try {
    const rows = await sql`select pg_terminate_backend(pid) from pg_stat_activity where datname = ${database} and pid <> pg_backend_pid()`;
    return rows.length;
  } finally {
    await sql.end();
  }
}

/** Clients sending intents at about `rate` a second in all, each retrying its POST (same key) until it is accepted. */
function startStream(fixture: Fixture, options: Options) {
  const accepted = new Map<string, number>(); // intent id → when accepted
  const refused: string[] = [];
  let stopping = false;
  let sent = 0;
  const period = (options.clients / options.rate) * 1000;
  const clients = Array.from({ length: options.clients }, async (_, c) => {
    while (!stopping) {
      const started = now();
      const player = fixture.players[(sent++ + c) % fixture.players.length]!;
      const intent = await fixture.api.postIdempotent<{ id: string }>("/v1/transaction_intents", intentBody(fixture, player));
      if (intent) accepted.set(intent.id, Date.now());
      else refused.push(player.id);
      await sleep(Math.max(0, randomMs(0.5, 1.5) * period - (now() - started)));
    }
  });
  return {
    accepted,
    refused,
    stop: async () => {
      stopping = true;
      await Promise.all(clients);
    },
  };
}

export async function crashDrill(short: boolean): Promise<number> {
  const options = short ? SHORT : FULL;
  const chain: DrillChain = await startDrillChain(tempDir("crash"));
  // Runs of a killed process are taken over once their lease runs out: 5 s instead of the default minute, or the
  // kills (every few seconds) would mostly measure the lease. So are the Idempotency-Key claims of its requests.
  const { server, saveLog, finish } = await startDrillServer("crash", {
    RUNNER_LEASE_MS: process.env.RUNNER_LEASE_MS ?? "5000",
    IDEMPOTENCY_LEASE_SECONDS: process.env.IDEMPOTENCY_LEASE_SECONDS ?? "5",
  });
  const secrets = new Map<string, string>();
  const receiver = await startReceiver(secrets);
  let code = 1;
  try {
    const fixture = await setupProject(server, chain.chain, "crash drill", options.players);
    await subscribe(fixture, receiver.url, TOPICS, secrets);
    const fromBlock = await blockNumber(chain.chain);
    console.log(
      `\nCrash drill${short ? " (short)" : ""}: ${options.clients} clients, about ${options.rate} intents/s over ${options.players} players; ` +
        `${options.kills} SIGKILLs of the server 2–8 s after it is back, anvil restarted once, PostgreSQL connections cut once.`,
    );

    const stream = startStream(fixture, options);
    const anvilAfter = Math.max(1, Math.floor(options.kills / 3));
    const cutAfter = Math.max(1, Math.floor((2 * options.kills) / 3));
    const downMs: number[] = [];
    let cut = 0;
    for (let kill = 1; kill <= options.kills; kill++) {
      await sleep(randomMs(2_000, 8_000));
      const t0 = now();
      await server.kill();
      await server.restart();
      downMs.push(now() - t0);
      console.log(`  kill ${kill}: down ${(downMs.at(-1)! / 1000).toFixed(1)} s, ${stream.accepted.size} intents accepted so far`);
      if (kill === anvilAfter) {
        await sleep(randomMs(2_000, 4_000));
        const t1 = now();
        const before = await blockNumber(chain.chain);
        await chain.restart(randomMs(2_000, 5_000));
        const after = await blockNumber(chain.chain);
        // A chain that came back without its history would make every check below meaningless.
        if (after < before) throw new Error(`anvil lost its state: block ${before} before the restart, ${after} after`);
        console.log(`  anvil down ${((now() - t1) / 1000).toFixed(1)} s, restarted from its state file (block ${before} → ${after})`);
      }
      if (kill === cutAfter) {
        await sleep(randomMs(2_000, 4_000));
        cut = await cutDatabaseConnections(server);
        console.log(`  PostgreSQL: ${cut} connections of the server terminated`);
      }
    }
    await sleep(options.tailMs);
    await stream.stop();
    const accepted = new Set(stream.accepted.keys());
    console.log(`  stream stopped: ${accepted.size} intents accepted; settling (at most ${options.settleMs / 1000} s)…`);

    const settleStart = now();
    const settled = await settle(
      "settling",
      Date.now() + options.settleMs,
      async () => {
        const rows = await intentRows(server, fixture.projectId);
        if (rows.some((row) => row.status === "pending" || row.status === "broadcast")) return false;
        const events = await publishedEvents(server, fixture.projectId, TOPICS);
        const ids = new Set(receiver.got.map((d) => d.webhookId));
        // Nothing more can come once no relay or delivery run is left: an event never published will not be now.
        return events.every((e) => ids.has(e.id)) && (await unfinishedRuns(server)) === 0;
      },
      async () => {
        const rows = await intentRows(server, fixture.projectId);
        const events = await publishedEvents(server, fixture.projectId, TOPICS);
        const ids = new Set(receiver.got.map((d) => d.webhookId));
        return `${rows.filter((r) => r.status === "successful").length}/${accepted.size} successful, ${events.filter((e) => ids.has(e.id)).length}/${events.length} events received, ${await unfinishedRuns(server)} runs unfinished`;
      },
    );
    const settleSeconds = (now() - settleStart) / 1000;
    await settleLedger(server, fixture.projectId, chain.chain.chainId, LEDGER_SETTLE_MS);
    const ledger = await checkLedger(server, chain.chain, fixture.projectId, fixture.players.map((p) => p.address));

    const rows = await intentRows(server, fixture.projectId);
    const landings = await checkLandings(chain.chain, rows, accepted, fixture.players.map((p) => p.address), fromBlock);
    // Each landed intent must have published broadcast and successful (a failed one: broadcast and failed).
    const expected = rows.filter((r) => accepted.has(r.id)).flatMap((r): [string, string][] => [["transaction_intent.broadcast", r.id], [r.status === "failed" ? "transaction_intent.failed" : "transaction_intent.successful", r.id]]);
    const deliveries = checkDeliveries(await publishedEvents(server, fixture.projectId, TOPICS), receiver.got, expected);
    const unpublished = [...new Set(deliveries.missing.filter((m) => m.endsWith("never published")).map((m) => /of (tin_\S+):/.exec(m)?.[1] ?? ""))];
    const relayRuns = await relayRunsOf(server, unpublished);
    const orphaned = await orphanedRuns(server);
    const failed = await failedRuns(server);
    const log = saveLog();
    // The runner logs each run it takes over from a dead process: the kills did catch runs mid-way.
    const takeovers = server.output().split("run taken over after its lease expired").length - 1;

    printTable(`Crash drill${short ? " (short)" : ""} on PostgreSQL:`, [
      ["kills (SIGKILL + restart)", options.kills],
      ["server down per kill, mean s", (downMs.reduce((a, b) => a + b, 0) / downMs.length / 1000).toFixed(1)],
      ["anvil restarts", 1],
      ["PostgreSQL connections cut", cut],
      ["intents accepted", accepted.size],
      ["refused (4xx)", stream.refused.length],
      ["retries replayed (created before the kill)", fixture.api.replays],
      ["landed once", landings.landedOnce],
      ["lost", landings.lost.length],
      ["duplicated", landings.duplicated.length],
      ["(sender, nonce) repeated", landings.nonceRepeats],
      ["events published", deliveries.events],
      ["deliveries received", deliveries.requests],
      ["missing", deliveries.missing.length],
      ["unstable ids", deliveries.unstable.length],
      ["forged signatures", receiver.forged],
      ["runs taken over after a kill (server log)", takeovers],
      ["orphaned runs", orphaned.length],
      ["settled in s", settled ? settleSeconds.toFixed(0) : `> ${options.settleMs / 1000}`],
      ...ledger.rows,
    ]);
    console.log(`  failed tries (retried with the same key): ${describeErrors(fixture.api.errors)}`);
    for (const [type, body] of fixture.api.refusals) console.log(`  refused ${type}: ${body}`);
    console.log(`  runs that gave up: ${failed}`);
    console.log(`  server output: ${log}`);
    for (const line of relayRuns) console.log(`  relay run of an intent without its events: ${line}`);
    code = verdict(
      "crash",
      [
        ["lost", landings.lost],
        ["duplicated", landings.duplicated],
        ["(sender, nonce) repeated", landings.nonceRepeats ? [`${landings.nonceRepeats} pairs`] : []],
        ["missing deliveries", deliveries.missing],
        ["unstable delivery ids", deliveries.unstable],
        ["forged deliveries", receiver.forged ? [`${receiver.forged} requests`] : []],
        ["orphaned runs", orphaned],
        ["refused intents", stream.refused.length ? [...fixture.api.refusals.keys()] : []],
        ["sponsorship ledger problems", ledger.problems],
      ],
      `${options.kills} kills, ${accepted.size} intents each landed once, ${deliveries.events} events all delivered (${deliveries.requests} requests), no orphaned run, ${ledger.summary}`,
    );
    return code;
  } finally {
    await receiver.close();
    await finish(code === 0);
    await chain.stop();
  }
}
