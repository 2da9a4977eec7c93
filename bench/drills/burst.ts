// `npm run drill -- burst`: a thousand sponsored intents sent at once over ten accounts (a hundred each, so ops of one
// account are in flight together), with the service's default limits. Every one must land once with its own
// (sender, nonce); prints the creation rate, the landing time and the failed tries by type. Then the project's
// sponsorship ledger must add up: nothing left held, settlements = the ops' actualGasCost on chain, each intent's hold
// settled or released once (./ledger).
import { now, quantile, sleep } from "../lib";
import { checkLandings, intentRows, printTable, verdict } from "./checks";
import { describeErrors } from "./client";
import { checkLedger, LEDGER_SETTLE_MS, settleLedger } from "./ledger";
import { blockNumber, intentBody, query, setupProject, startDrillChain, startDrillServer, tempDir } from "./setup";

const ACCOUNTS = 10;
/** How often the database is read for landed intents (not the API: polling must not load what is measured). */
const POLL_MS = 250;

const seconds = (ms: number) => (ms / 1000).toFixed(1);

export async function burstDrill(short: boolean): Promise<number> {
  const total = short ? 100 : 1000;
  const landTimeoutMs = short ? 120_000 : 600_000;
  const chain = await startDrillChain(tempDir("burst"));
  const { server, saveLog, finish } = await startDrillServer("burst", {});
  let code = 1;
  try {
    const fixture = await setupProject(server, chain.chain, "burst drill", ACCOUNTS);
    // Each account's first intent deploys it; the burst is about ops of deployed accounts, so that one goes first.
    const first = await Promise.all(fixture.players.map((p) => fixture.api.call<{ id: string }>("POST", "/v1/transaction_intents", intentBody(fixture, p, 1))));
    const deployed = new Set(first.map((i) => i.id));
    for (let waited = 0; ; waited += 500) {
      const rows = await intentRows(server, fixture.projectId);
      if (rows.filter((r) => deployed.has(r.id)).every((r) => r.status === "successful")) break;
      if (waited > 120_000) throw new Error(`the accounts' first intents did not land: ${JSON.stringify(rows)}`);
      await sleep(500);
    }
    fixture.api.errors.clear();
    // Past the block of the last deployment: each burst op mines in a later block (anvil mines every transaction at once).
    const fromBlock = (await blockNumber(chain.chain)) + 1n;
    console.log(`\nBurst drill${short ? " (short)" : ""}: ${total} intents at once over ${ACCOUNTS} deployed accounts (${total / ACCOUNTS} each), default rate limits.`);

    const start = now();
    const postStart = new Map<string, number>(); // intent id → when its first try started
    const postMs: number[] = [];
    let lastAccepted = start;
    const refused: number[] = [];
    const posting = Promise.all(
      Array.from({ length: total }, async (_, i) => {
        const t0 = now();
        const intent = await fixture.api.postIdempotent<{ id: string }>("/v1/transaction_intents", intentBody(fixture, fixture.players[i % ACCOUNTS]!, 1));
        if (!intent) return void refused.push(i);
        postStart.set(intent.id, t0);
        postMs.push(now() - t0);
        lastAccepted = Math.max(lastAccepted, now());
      }),
    );

    // Landing as the database records it (status successful or failed is set from the bundle's receipt).
    const landMs = new Map<string, number>();
    const ended = new Map<string, string>();
    let postingDone = false;
    void posting.then(() => (postingDone = true));
    const deadline = () => (postingDone ? lastAccepted + landTimeoutMs : Infinity);
    while (!postingDone || (ended.size < postStart.size && now() < deadline())) {
      const rows = await query<{ id: string; status: string }>(server, `select id, status from transaction_intents where project_id = $1 and status in ('successful', 'failed')`, [fixture.projectId]);
      const seenAt = now();
      for (const row of rows) {
        const t0 = postStart.get(row.id);
        if (t0 === undefined || ended.has(row.id)) continue;
        ended.set(row.id, row.status);
        landMs.set(row.id, seenAt - t0);
      }
      await sleep(POLL_MS);
    }
    await posting;
    const landedAll = now();

    const accepted = new Set(postStart.keys());
    const rows = (await intentRows(server, fixture.projectId)).filter((r) => !deployed.has(r.id));
    const landings = await checkLandings(chain.chain, rows, accepted, fixture.players.map((p) => p.address), fromBlock);
    const landed = [...landMs].filter(([id]) => ended.get(id) === "successful").map(([, ms]) => ms);
    // The ledger over all of the project's intents, the accounts' first ones included.
    await settleLedger(server, fixture.projectId, chain.chain.chainId, LEDGER_SETTLE_MS);
    const ledger = await checkLedger(server, chain.chain, fixture.projectId, fixture.players.map((p) => p.address));
    const log = saveLog();

    printTable(`Burst drill${short ? " (short)" : ""} on PostgreSQL:`, [
      ["intents sent at once", total],
      ["accounts", ACCOUNTS],
      ["accepted (200)", accepted.size],
      ["refused (4xx)", refused.length],
      ["creation rate, POSTs/s", (accepted.size / ((lastAccepted - start) / 1000)).toFixed(1)],
      ["POST latency p50 / p99, s", `${seconds(quantile(postMs, 0.5))} / ${seconds(quantile(postMs, 0.99))}`],
      ["landing time p50 / p99, s", `${seconds(quantile(landed, 0.5))} / ${seconds(quantile(landed, 0.99))}`],
      ["all landed after, s", seconds(landedAll - start)],
      ["landed once", landings.landedOnce],
      ["not landed", landings.lost.length],
      ["duplicated", landings.duplicated.length],
      ["ops on chain", landings.onChain],
      ["distinct (sender, nonce)", landings.distinctNonces],
      ["(sender, nonce) repeated", landings.nonceRepeats],
      ...ledger.rows,
    ]);
    console.log(`  failed tries by type (retried with the same key unless 4xx): ${describeErrors(fixture.api.errors)}`);
    for (const [type, body] of fixture.api.refusals) console.log(`  refused ${type}: ${body}`);
    console.log(`  server output: ${log}`);
    code = verdict(
      "burst",
      [
        ["not landed", landings.lost],
        ["refused", refused.length ? [...fixture.api.refusals.keys()] : []],
        ["duplicated", landings.duplicated],
        ["(sender, nonce) repeated", landings.nonceRepeats ? [`${landings.nonceRepeats} pairs`] : []],
        ["sponsorship ledger problems", ledger.problems],
      ],
      `${landings.landedOnce}/${total} landed once with distinct nonces, landing p99 ${seconds(quantile(landed, 0.99))} s, ${ledger.summary}`,
    );
    return code;
  } finally {
    await finish(code === 0);
    await chain.stop();
  }
}
