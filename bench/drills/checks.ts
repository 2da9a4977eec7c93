// The drills' verdicts, read from the chain, the server's database and what the receiver got; and how they print.
import { getAbiItem, type Hex } from "viem";
import { entryPointAbi } from "@/contracts/artifacts";
import { publicClient } from "@/lib/chain/clients";
import { serviceDeployment } from "@/lib/chain/contracts";
import type { ChainConfig } from "@/lib/chain/registry";
import type { RunningServer } from "../../test/helpers/server";
import { sleep } from "../lib";
import { query, type Delivery } from "./setup";

const USER_OPERATION_EVENT = getAbiItem({ abi: entryPointAbi, name: "UserOperationEvent" });

/** An intent as its row stands at the end: its op may have been rebuilt (new hash) since it was accepted. */
export interface IntentRow {
  id: string;
  status: string;
  userOperationHash: Hex;
  error: string | null;
}

export const intentRows = (server: RunningServer, projectId: string) =>
  query<IntentRow>(server, `select id, status, user_operation_hash as "userOperationHash", error from transaction_intents where project_id = $1`, [projectId]);

export interface LandingCheck {
  /** Accepted intents whose op has exactly one UserOperationEvent on chain. */
  landedOnce: number;
  /** Accepted intents not on chain (with their status and error). */
  lost: string[];
  /** Ops on chain twice, ops of these accounts that no intent answers for, and intents the client never got back. */
  duplicated: string[];
  /** (sender, nonce) pairs used by more than one op on chain. */
  nonceRepeats: number;
  /** Distinct (sender, nonce) pairs among them. */
  distinctNonces: number;
  /** Ops of these accounts on chain in the window. */
  onChain: number;
}

/**
 * Exactly once, from the chain: every accepted intent's (final) op has one UserOperationEvent since `fromBlock`, no
 * op of these accounts landed without an intent answering for it, no (sender, nonce) twice; and the database holds no
 * intent the client was not answered with (a retried POST that created a second one).
 */
export async function checkLandings(chain: ChainConfig, rows: IntentRow[], accepted: Set<string>, senders: Hex[], fromBlock: bigint): Promise<LandingCheck> {
  const own = new Set(senders.map((s) => s.toLowerCase()));
  const logs = await publicClient(chain).getLogs({ address: serviceDeployment().entryPoint, event: USER_OPERATION_EVENT, fromBlock, toBlock: "latest" });
  const events = logs.filter((log) => own.has(log.args.sender!.toLowerCase()));
  const byHash = new Map<string, number>();
  const nonces = new Map<string, number>();
  for (const { args } of events) {
    byHash.set(args.userOpHash!, (byHash.get(args.userOpHash!) ?? 0) + 1);
    const pair = `${args.sender!.toLowerCase()}:${args.nonce}`;
    nonces.set(pair, (nonces.get(pair) ?? 0) + 1);
  }
  const mine = rows.filter((row) => accepted.has(row.id));
  const hashes = new Set(mine.map((row) => row.userOperationHash));
  const duplicated = [
    ...[...byHash].filter(([, n]) => n > 1).map(([hash, n]) => `op ${hash} on chain ${n} times`),
    ...[...byHash.keys()].filter((hash) => !hashes.has(hash as Hex)).map((hash) => `op ${hash} on chain without an accepted intent`),
    ...rows.filter((row) => !accepted.has(row.id)).map((row) => `intent ${row.id} (${row.status}) in the database, never answered to the client`),
  ];
  const lost = [
    ...[...accepted].filter((id) => !rows.some((row) => row.id === id)).map((id) => `${id}: accepted, not in the database`),
    ...mine.filter((row) => byHash.get(row.userOperationHash) === undefined).map((row) => `${row.id}: ${row.status}${row.error ? ` (${row.error.slice(0, 160)})` : ""}`),
  ];
  return {
    landedOnce: mine.filter((row) => byHash.get(row.userOperationHash) === 1).length,
    lost,
    duplicated,
    nonceRepeats: [...nonces.values()].filter((n) => n > 1).length,
    distinctNonces: nonces.size,
    onChain: events.length,
  };
}

export interface DeliveryCheck {
  events: number;
  /** Requests the receiver answered 200 (redeliveries included). */
  requests: number;
  /** Events never received under their id. */
  missing: string[];
  /** One event (topic and intent) received under more than one id, or an id the server never published. */
  unstable: string[];
}

/** Outbound events of the project on `topics`, as published (the `webhook-id` each delivery must carry). */
export const publishedEvents = (server: RunningServer, projectId: string, topics: string[]) =>
  query<{ id: string; topic: string; objectId: string; createdAt: Date }>(
    server,
    `select id, topic, object_id as "objectId", created_at as "createdAt" from outbound_events where project_id = $1 and topic = any($2)`,
    [projectId, topics],
  );

/**
 * At least once, with stable ids: every published event reached the receiver under its own id, and each happening
 * (topic, intent) came under one id only; `expected` (topic, intent) pairs must have been published at all.
 */
export function checkDeliveries(events: { id: string; topic: string; objectId: string }[], got: Delivery[], expected: [topic: string, intentId: string][] = []): DeliveryCheck {
  const ids = new Set(got.map((d) => d.webhookId));
  const published = new Set(events.map((e) => e.id));
  const missing = events.filter((e) => !ids.has(e.id)).map((e) => `${e.id} (${e.topic} of ${e.objectId})`);
  const keyOf = (topic: string, object: string) => `${topic} of ${object}`;
  const seen = new Set(events.map((e) => keyOf(e.topic, e.objectId)));
  missing.push(...expected.filter(([topic, id]) => !seen.has(keyOf(topic, id))).map(([topic, id]) => `${keyOf(topic, id)}: never published`));
  const idsOf = new Map<string, Set<string>>();
  for (const d of got) idsOf.set(keyOf(d.topic, d.objectId), (idsOf.get(keyOf(d.topic, d.objectId)) ?? new Set()).add(d.webhookId));
  const unstable = [
    ...[...idsOf].filter(([, s]) => s.size > 1).map(([what, s]) => `${what} under ${s.size} ids: ${[...s].join(", ")}`),
    ...[...ids].filter((id) => !published.has(id)).map((id) => `${id} received, not a published event`),
  ];
  return { events: events.length, requests: got.length, missing, unstable };
}

interface RunRow {
  id: string;
  functionId: string;
  eventId: string;
  status: string;
  lockedUntil: Date | null;
  runAt: Date;
  updatedAt: Date;
}

/**
 * Runs nobody will finish: 'running' with a lease that ran out, or 'queued' and due for over a minute (the runner
 * looks every half second), or events waiting over a minute for a batch. Read twice 10 s apart, counting only runs orphaned both times and unchanged meanwhile, so a
 * run between two steps at the moment of reading is not taken for one.
 */
export async function orphanedRuns(server: RunningServer): Promise<string[]> {
  const read = () =>
    query<RunRow>(
      server,
      `select id, function_id as "functionId", event_id as "eventId", status, locked_until as "lockedUntil", run_at as "runAt", updated_at as "updatedAt"
         from function_runs
        where (status = 'running' and locked_until < now()) or (status = 'queued' and run_at < now() - interval '60 seconds')
           or (status = 'batched' and created_at < now() - interval '60 seconds')`,
    );
  const first = await read();
  if (first.length === 0) return [];
  await sleep(10_000);
  const again = new Map((await read()).map((run) => [run.id, run]));
  return first
    .filter((run) => again.get(run.id)?.updatedAt.getTime() === run.updatedAt.getTime())
    .map((run) => `${run.id} ${run.functionId} ${run.eventId}: ${run.status}, ${run.status === "running" ? `lease ran out ${run.lockedUntil?.toISOString()}` : `due since ${run.runAt.toISOString()}`}`);
}

/**
 * The relay runs of these intents (the batch runs their events joined, and their runs alone), step by step with each
 * step's stored result: what to look at when one went wrong.
 */
export async function relayRunsOf(server: RunningServer, intentIds: string[]): Promise<string[]> {
  if (intentIds.length === 0) return [];
  const rows = await query<{ id: string; eventId: string; status: string; attempt: number; steps: { order: string[]; state: Record<string, { data?: unknown; error?: unknown }> } }>(
    server,
    `select id, event_id as "eventId", status, attempt, steps from function_runs
      where function_id like '%relay-transaction-intent%'
        and (event_id like any($1) or id in (select output->>'batch' from function_runs where event_id like any($1) and output->>'batch' is not null))`,
    [intentIds.flatMap((id) => [`relay:${id}%`, `relay-alone:relay:${id}%`])],
  );
  return rows.map((run) => {
    const steps = run.steps.order.map((hash) => JSON.stringify(run.steps.state[hash]?.data ?? run.steps.state[hash]?.error ?? null));
    return `${run.eventId} ${run.id}: ${run.status} (attempt ${run.attempt}), step results in order: ${steps.join(" → ") || "none"}`;
  });
}

/** Runs that gave up (retries spent), by function: not a verdict by themselves, printed beside it. */
export async function failedRuns(server: RunningServer): Promise<string> {
  const rows = await query<{ functionId: string; n: number }>(server, `select function_id as "functionId", count(*)::int as n from function_runs where status = 'failed' group by 1`);
  return rows.length ? rows.map((r) => `${r.functionId} ×${r.n}`).join(", ") : "none";
}

/** The delivery and relay runs not ended yet (waiting for a batch, queued, sleeping between retries, or running). */
export async function unfinishedRuns(server: RunningServer): Promise<number> {
  const [row] = await query<{ n: number }>(
    server,
    `select count(*)::int as n from function_runs where status in ('batched', 'queued', 'running') and (function_id like '%deliver-event' or function_id like '%relay-transaction-intent%')`,
  );
  return row!.n;
}

/** Waits for `done` (checked every second), printing `progress` every 10 s; false when `deadline` passed first. */
export async function settle(what: string, deadline: number, done: () => Promise<boolean>, progress: () => Promise<string>): Promise<boolean> {
  let printed = Date.now();
  for (;;) {
    if (await done()) return true;
    if (Date.now() > deadline) return false;
    if (Date.now() - printed >= 10_000) {
      printed = Date.now();
      console.log(`  … ${what}: ${await progress()}`);
    }
    await sleep(1_000);
  }
}

/** A two-column table of the drill's numbers. */
export function printTable(title: string, rows: [string, string | number][]) {
  const width = Math.max(...rows.map(([label]) => label.length));
  console.log(`\n${title}`);
  for (const [label, value] of rows) console.log(`  ${label.padEnd(width)}  ${String(value).padStart(10)}`);
}

/** Lists what went wrong (at most 20 lines a list), then the one-line verdict; answers the exit code. */
export function verdict(drill: string, problems: [what: string, items: string[]][], summary: string): number {
  const failed = problems.filter(([, items]) => items.length > 0);
  for (const [what, items] of failed) {
    console.log(`\n${what} (${items.length}):`);
    for (const item of items.slice(0, 20)) console.log(`  ${item}`);
    if (items.length > 20) console.log(`  … ${items.length - 20} more`);
  }
  console.log(`\n${failed.length ? "FAIL" : "PASS"} ${drill}: ${failed.length ? failed.map(([what, items]) => `${items.length} ${what}`).join(", ") : summary}`);
  return failed.length ? 1 : 0;
}
