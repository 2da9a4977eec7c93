// `npm run drill -- outage`: the subscriptions' receiver is down (connection refused) for a while as intents land and
// publish events; once it is back it must get every event, under the event's own id, within the retry schedule the
// service has (lib/deliveries/schedule.ts; nothing shortened).
import { durationMs, retrySchedule } from "@/lib/deliveries/schedule";
import { quantile, sleep } from "../lib";
import { checkDeliveries, failedRuns, intentRows, orphanedRuns, printTable, publishedEvents, settle, verdict } from "./checks";
import { describeErrors } from "./client";
import { intentBody, query, setupProject, startDrillChain, startDrillServer, startReceiver, subscribe, tempDir } from "./setup";

const TOPICS = ["transaction_intent.broadcast", "transaction_intent.successful", "transaction_intent.failed"];
/** Late beyond its scheduled attempt that an event may arrive: the runner's polling and the attempt itself. */
const SLACK_MS = 30_000;

/**
 * When an event first attempted at `firstAt` is next attempted once the receiver is back at `upAt`: the first attempt
 * of the schedule at or after then (the waits add up from the first attempt; attempts take moments here).
 */
export function nextAttemptAfter(firstAt: number, upAt: number, schedule: string[]): number | null {
  let at = firstAt;
  if (at >= upAt) return at;
  for (const wait of schedule) {
    at += durationMs(wait);
    if (at >= upAt) return at;
  }
  return null; // the schedule ends before the receiver is back: the event is given up
}

export async function outageDrill(short: boolean): Promise<number> {
  const outageMs = short ? 25_000 : 600_000;
  const intervalMs = short ? 2_500 : 15_000;
  const schedule = retrySchedule();
  const chain = await startDrillChain(tempDir("outage"));
  const { server, saveLog, finish } = await startDrillServer("outage", {});
  const secrets = new Map<string, string>();
  const receiver = await startReceiver(secrets);
  let code = 1;
  try {
    const fixture = await setupProject(server, chain.chain, "outage drill", 4);
    await subscribe(fixture, receiver.url, TOPICS, secrets);
    console.log(
      `\nOutage drill${short ? " (short)" : ""}: receiver down ${outageMs / 1000} s, an intent every ${intervalMs / 1000} s meanwhile; ` +
        `retry schedule ${schedule.join(",")} (waits after each failed attempt).`,
    );

    await receiver.down();
    const downAt = Date.now();
    const accepted: string[] = [];
    for (let i = 0; Date.now() - downAt < outageMs - intervalMs / 2; i++) {
      const intent = await fixture.api.postIdempotent<{ id: string }>("/v1/transaction_intents", intentBody(fixture, fixture.players[i % fixture.players.length]!));
      if (intent) accepted.push(intent.id);
      await sleep(Math.max(0, downAt + (i + 1) * intervalMs - Date.now()));
    }
    await sleep(Math.max(0, downAt + outageMs - Date.now()));
    const [attemptsWhileDown] = await query<{ n: number }>(server, `select count(*)::int as n from webhook_deliveries where project_id = $1 and status = 'failed'`, [fixture.projectId]);
    await receiver.up();
    const upAt = Date.now();
    console.log(`  receiver back after ${((upAt - downAt) / 1000).toFixed(0)} s: ${accepted.length} intents sent, ${attemptsWhileDown!.n} attempts failed meanwhile`);

    // The bound comes from the events themselves: each one's next scheduled attempt after the receiver's return.
    // Published events have created_at (the database's clock, the same machine's).
    const dueBy = async () => {
      const events = await publishedEvents(server, fixture.projectId, TOPICS);
      const due = events.map((e) => nextAttemptAfter(e.createdAt.getTime(), upAt, schedule) ?? Infinity);
      return { events, latest: Math.max(upAt, ...due) };
    };
    let bound = (await dueBy()).latest;
    console.log(`  the schedule's next attempts put the last delivery ${((bound - upAt) / 1000).toFixed(0)} s after the receiver's return; waiting for it (+${SLACK_MS / 1000} s)…`);
    await settle(
      "waiting for deliveries",
      Infinity,
      async () => {
        const { events, latest } = await dueBy();
        bound = latest;
        const ids = new Set(receiver.got.map((d) => d.webhookId));
        const rows = await intentRows(server, fixture.projectId);
        const done = rows.every((r) => r.status !== "pending" && r.status !== "broadcast") && events.length >= 2 * accepted.length && events.every((e) => ids.has(e.id));
        return done || Date.now() > bound + SLACK_MS;
      },
      async () => {
        const { events } = await dueBy();
        const ids = new Set(receiver.got.map((d) => d.webhookId));
        return `${events.filter((e) => ids.has(e.id)).length}/${events.length} events received, next due by +${((bound - upAt) / 1000).toFixed(0)} s`;
      },
    );
    const events = await publishedEvents(server, fixture.projectId, TOPICS);
    const rows = await intentRows(server, fixture.projectId);
    const expected = rows.flatMap((r): [string, string][] => [["transaction_intent.broadcast", r.id], [r.status === "failed" ? "transaction_intent.failed" : "transaction_intent.successful", r.id]]);
    const deliveries = checkDeliveries(events, receiver.got, expected);
    // Per event: from the receiver's return to its first arrival, against its own scheduled attempt.
    const firstArrival = new Map<string, number>();
    for (const d of receiver.got) if (!firstArrival.has(d.webhookId)) firstArrival.set(d.webhookId, d.at);
    const afterUp = events.filter((e) => firstArrival.has(e.id)).map((e) => firstArrival.get(e.id)! - upAt);
    const late = events
      .filter((e) => firstArrival.has(e.id))
      .filter((e) => firstArrival.get(e.id)! > (nextAttemptAfter(e.createdAt.getTime(), upAt, schedule) ?? Infinity) + SLACK_MS)
      .map((e) => `${e.id}: arrived ${((firstArrival.get(e.id)! - upAt) / 1000).toFixed(0)} s after the return, scheduled by +${(((nextAttemptAfter(e.createdAt.getTime(), upAt, schedule) ?? Infinity) - upAt) / 1000).toFixed(0)} s`);
    const orphaned = await orphanedRuns(server);
    const failed = await failedRuns(server);
    const log = saveLog();

    printTable(`Outage drill${short ? " (short)" : ""} on PostgreSQL:`, [
      ["receiver down, s", ((upAt - downAt) / 1000).toFixed(0)],
      ["intents sent while down", accepted.length],
      ["events published", deliveries.events],
      ["attempts failed while down", attemptsWhileDown!.n],
      ["deliveries received after", deliveries.requests],
      ["missing", deliveries.missing.length],
      ["unstable ids", deliveries.unstable.length],
      ["arrived later than scheduled", late.length],
      ["after the return p50 / max, s", `${(quantile(afterUp, 0.5) / 1000).toFixed(0)} / ${(Math.max(0, ...afterUp) / 1000).toFixed(0)}`],
      ["schedule's bound after return, s", ((bound - upAt) / 1000).toFixed(0)],
      ["orphaned runs", orphaned.length],
    ]);
    console.log(`  failed tries of the client: ${describeErrors(fixture.api.errors)}; runs that gave up: ${failed}`);
    console.log(`  server output: ${log}`);
    code = verdict(
      "outage",
      [
        ["missing deliveries", deliveries.missing],
        ["unstable delivery ids", deliveries.unstable],
        ["forged deliveries", receiver.forged ? [`${receiver.forged} requests`] : []],
        ["deliveries later than their scheduled attempt", late],
        ["orphaned runs", orphaned],
      ],
      `all ${deliveries.events} events delivered after a ${((upAt - downAt) / 1000).toFixed(0)} s outage, the last ${(Math.max(0, ...afterUp) / 1000).toFixed(0)} s after the return`,
    );
    return code;
  } finally {
    await receiver.close();
    await finish(code === 0);
    await chain.stop();
  }
}
