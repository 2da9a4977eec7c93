// Event batching for the embedded runner, as Inngest's `batchEvents` does it: events of a batched function wait as
// "batched" rows until a batch forms, which turns up to maxSize of them into one run holding them all.
import crypto from "node:crypto";
import { sql } from "drizzle-orm";
import type { InngestFunction } from "inngest";
import { rowsOf, type Db } from "@/lib/db/client";
import type { functionRuns } from "@/lib/db/schema";

type RunRow = typeof functionRuns.$inferSelect;

export interface BatchConfig {
  maxSize: number;
  timeoutMs: number;
}

const UNITS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 };

/** The function's `batchEvents` ({ maxSize, timeout: "1s" }), or null when it takes one event per run. */
export function batchConfigOf(fn: InngestFunction.Any): BatchConfig | null {
  const batch = (fn.opts as { batchEvents?: { maxSize: number; timeout: string } }).batchEvents;
  if (!batch) return null;
  const match = /^(\d+(?:\.\d+)?)(ms|s|m|h)$/.exec(batch.timeout);
  if (!match) throw new Error(`unsupported batch timeout "${batch.timeout}"`);
  return { maxSize: batch.maxSize, timeoutMs: Number(match[1]) * UNITS[match[2]!]! };
}

interface RawRun {
  id: string;
  function_id: string;
  event_id: string;
  event: RunRow["event"];
  events: RunRow["events"];
  status: RunRow["status"];
  attempt: number;
  steps: RunRow["steps"];
  run_at: string | Date;
  locked_until: string | Date | null;
  output: unknown;
  error: string | null;
  created_at: string | Date;
  updated_at: string | Date;
}

const date = (value: string | Date | null) => (value === null ? null : new Date(value));

/**
 * Forms one batch of `functionId`'s waiting events, in one statement, and returns it as a run already claimed (leased
 * for `leaseMs`), or null when none is due. A batch is due when `force` says so (this process has nothing of the
 * function running: no reason to wait), when maxSize events wait, or when the oldest has waited `timeoutMs`. Each
 * project's events take turns (a project's n-th waiting event ranks n-th), so one project's backlog does not fill
 * every batch; events leave "batched" once (an instance racing for the same rows gets only those it updated).
 */
export async function formBatch(db: Db, functionId: string, config: BatchConfig, options: { force: boolean; leaseMs: number }): Promise<RunRow | null> {
  const runId = `run_${crypto.randomUUID()}`;
  const result = await db.execute(sql`
    with waiting as (
      select id, event, created_at,
        row_number() over (partition by coalesce(event->'data'->>'projectId', id) order by created_at) as turn
      from function_runs
      where function_id = ${functionId} and status = 'batched'
    ), due as (
      select 1 from waiting
      having count(*) > 0 and (${options.force}::boolean or count(*) >= ${config.maxSize}::int
        or min(created_at) <= now() - ${Math.round(config.timeoutMs)}::int * interval '1 millisecond')
    ), picked as (
      select waiting.id from waiting, due order by turn, created_at limit ${config.maxSize}::int
    ), taken as (
      update function_runs set status = 'completed', output = jsonb_build_object('batch', ${runId}::text), updated_at = now()
      from picked where function_runs.id = picked.id and function_runs.status = 'batched'
      returning function_runs.event, function_runs.created_at
    )
    insert into function_runs (id, function_id, event_id, event, events, status, attempt, steps, run_at, locked_until)
    select ${runId}, ${functionId}, ${runId}, (array_agg(event order by created_at))[1], jsonb_agg(event order by created_at),
      'running', 0, '{"order":[],"state":{}}'::jsonb, now(), now() + ${Math.round(options.leaseMs)}::int * interval '1 millisecond'
    from taken having count(*) > 0
    returning *`);
  const [raw] = rowsOf<RawRun>(result);
  if (!raw) return null;
  return {
    id: raw.id,
    functionId: raw.function_id,
    eventId: raw.event_id,
    event: raw.event,
    events: raw.events,
    status: raw.status,
    attempt: raw.attempt,
    steps: raw.steps,
    runAt: date(raw.run_at)!,
    lockedUntil: date(raw.locked_until),
    output: raw.output,
    error: raw.error,
    createdAt: date(raw.created_at)!,
    updatedAt: date(raw.updated_at)!,
  };
}
