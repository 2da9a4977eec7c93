import crypto from "node:crypto";
import { CronExpressionParser } from "cron-parser";
import { and, eq, getTableColumns, inArray, notInArray, sql } from "drizzle-orm";
import type { InngestFunction } from "inngest";
import { ServerTiming } from "inngest/internals";
import { StepMode } from "inngest/types";
import type { Db } from "@/lib/db/client";
import { log } from "@/lib/log";
import { metrics } from "@/lib/metrics";
import { functionRuns } from "@/lib/db/schema";
import { batchConfigOf, formBatch, type BatchConfig } from "./batches";
import { inngest } from "./client";
import { envNumber } from "@/lib/config";
import { processSingleton } from "@/lib/singleton";

type AnyFunction = InngestFunction.Any;
type RunRow = typeof functionRuns.$inferSelect;
type StepState = RunRow["steps"]["state"];
/** What the runner keeps of a batched function (see EmbeddedRunner.batches). */
type BatchState = BatchConfig & { waiting: number; executing: number; timer: NodeJS.Timeout | null; want: "force" | "due" | null };

/** An event as the runner stores it; the service's own (its jobs) are declared in lib/jobs/messages.ts. */
export interface RunnerEvent {
  name: string;
  data: Record<string, unknown>;
  /** Deduplication id: the same id never starts a function twice. */
  id: string;
}

export interface RunnerOptions {
  /** How often to look for due runs when nothing kicks the runner. */
  pollMs?: number;
  /** Runs executed at once by this process. */
  concurrency?: number;
  /**
   * How long a claimed run stays ours without word from us: renewed while the run executes, so only
   * a process that died (or lost the database) has its runs taken over, this long after.
   */
  leaseMs?: number;
  /** First retry delay; doubles per attempt up to a minute. */
  retryBaseMs?: number;
  /**
   * Runs of one project (its intents' relays, webhooks, expiries) executing at once, across
   * instances: the rest of the slots stay for other projects. Default: three quarters of
   * `concurrency`, or RUNNER_PROJECT_SHARE.
   */
  projectShare?: number;
  /**
   * This process is the database's only user (embedded PGlite): runs another process left
   * "running" belong to a process that is gone, so they are taken at once instead of after the lease.
   */
  exclusive?: boolean;
}

const DEFAULT_RETRIES = 4;
const silent = { info() {}, warn() {}, error() {}, debug() {} };

const triggerEvents = (fn: AnyFunction): string[] =>
  ((fn.opts as { triggers?: { event?: string }[] }).triggers ?? []).flatMap((t) => (t.event ? [t.event] : []));

const cronTriggers = (fn: AnyFunction): string[] =>
  ((fn.opts as { triggers?: { cron?: string }[] }).triggers ?? []).flatMap((t) => (t.cron ? [t.cron] : []));

const functionId = (fn: AnyFunction) => fn.id(inngest.id);

/** The event Inngest sends a cron-triggered function. */
export const CRON_EVENT = "inngest/scheduled.timer";

/** The latest time a cron schedule ("* * * * *", or Inngest's "TZ=Europe/Paris 0 9 * * *") was due, in ms. */
export function lastCronSlot(cron: string, now = new Date()): number {
  return cronSlots(cron, now).last;
}

/** The cron's latest slot before `now`, and the one after that (never later than the first slot after `now`). */
export function cronSlots(cron: string, now = new Date()): { last: number; next: number } {
  const [, tz, expression] = /^(?:TZ=(\S+)\s+)?(.*)$/.exec(cron.trim())!;
  const last = CronExpressionParser.parse(expression!, { currentDate: now, tz: tz ?? "UTC" }).prev().getTime();
  return { last, next: CronExpressionParser.parse(expression!, { currentDate: new Date(last), tz: tz ?? "UTC" }).next().getTime() };
}

/** "1s", "250ms", "1h30m", or an ISO date (step.sleepUntil): the time to wake. */
export function wakeTime(spec: string, now = Date.now()): number {
  const date = Date.parse(spec);
  if (/^\d{4}-\d\d-\d\d/.test(spec) && !Number.isNaN(date)) return date;
  const units: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000, w: 604_800_000 };
  let total = 0;
  const parts = spec.match(/(\d+(?:\.\d+)?)(ms|s|m|h|d|w)/g);
  if (!parts || parts.join("") !== spec) throw new Error(`unsupported sleep duration "${spec}"`);
  for (const part of parts) {
    const [, amount, unit] = /(\d+(?:\.\d+)?)(ms|s|m|h|d|w)/.exec(part)!;
    total += Number(amount) * units[unit!]!;
  }
  return now + total;
}

/**
 * Runs Inngest function definitions in this process, durably: the SDK's own execution engine
 * runs the handler against the step results stored in PostgreSQL/PGlite, each new step result
 * is stored before the next step starts, and runs are claimed with a lease so a crashed
 * process's runs are taken over. Step errors are retried with backoff as Inngest would.
 */
export class EmbeddedRunner {
  private readonly byId: Map<string, AnyFunction>;
  private readonly byEvent = new Map<string, AnyFunction[]>();
  /**
   * Cron-triggered functions, with the last slot this process scheduled and the next slot's time (`due`), before
   * which a tick (one per event sent, under load) need not parse the expression.
   */
  private readonly crons: { fn: AnyFunction; cron: string; scheduled: number; due: number }[];
  private readonly active = new Set<Promise<void>>();
  /** Ids of the runs this process is executing: never claimed again meanwhile. */
  private readonly executing = new Set<string>();
  /** The lease heartbeat of each run executing here: stopped when a shutdown hands the runs over. */
  private readonly heartbeats = new Map<string, NodeJS.Timeout>();
  private timer: NodeJS.Timeout | null = null;
  private stopped = true;
  /** When the last look for due runs ended, and whether it failed (readiness: is this runner leasing?). */
  private lastTick = { at: 0, failed: false };
  private ticking = false;
  private again = false;
  private readonly opts: Required<RunnerOptions>;
  /**
   * Batched functions (batchEvents): events sent here and not yet in a batch, runs executing here, the timer that
   * forms a batch when its oldest event has waited the timeout, and whether a batch should be formed at the next tick.
   */
  private readonly batches = new Map<string, BatchState>();
  /** Whether the next tick claims runs (a batched event alone does not need the claim's query). */
  private claimWanted = true;

  constructor(
    private readonly db: Db,
    functions: AnyFunction[],
    options: RunnerOptions = {},
  ) {
    this.byId = new Map(functions.map((fn) => [functionId(fn), fn]));
    for (const fn of functions) for (const name of triggerEvents(fn)) this.byEvent.set(name, [...(this.byEvent.get(name) ?? []), fn]);
    this.crons = functions.flatMap((fn) => cronTriggers(fn).map((cron) => ({ fn, cron, scheduled: 0, due: 0 })));
    for (const fn of functions) {
      const config = batchConfigOf(fn);
      if (config) this.batches.set(functionId(fn), { ...config, waiting: 0, executing: 0, timer: null, want: null });
    }
    const concurrency = options.concurrency ?? 16;
    const projectShare = envNumber("RUNNER_PROJECT_SHARE", Math.ceil((concurrency * 3) / 4), { above: 0, integer: true });
    this.opts = { pollMs: 500, concurrency, leaseMs: 60_000, retryBaseMs: 1_000, exclusive: false, ...options, projectShare: options.projectShare ?? projectShare };
  }

  /**
   * Stores one run per triggered function (deduplicated by event id) and wakes the runner. A batched function's event
   * waits for its batch instead: formed at once when nothing of the function runs here, else when maxSize wait or
   * the oldest has waited the timeout (so batches grow with the load, and an idle service adds no delay).
   */
  async send(events: RunnerEvent[]): Promise<void> {
    const rows = events.flatMap((event) =>
      (this.byEvent.get(event.name) ?? []).map((fn) => ({
        id: `run_${crypto.randomUUID()}`,
        functionId: functionId(fn),
        eventId: event.id,
        event: { ...event, ts: Date.now() },
        steps: { order: [], state: {} },
        ...(this.batches.has(functionId(fn)) ? { status: "batched" as const } : {}),
      })),
    );
    if (rows.length === 0) return;
    const inserted = await this.db.insert(functionRuns).values(rows).onConflictDoNothing().returning({ functionId: functionRuns.functionId });
    let claim = false;
    for (const { functionId: id } of inserted) {
      const batch = this.batches.get(id);
      if (batch) batch.waiting++;
      else claim = true;
    }
    for (const [id, batch] of this.batches) if (inserted.some((r) => r.functionId === id)) this.nudgeBatch(batch);
    if (claim) this.kick();
  }

  /** Forms a batch now if nothing of its function runs here or it is full; else once its oldest event times out. */
  private nudgeBatch(batch: BatchState) {
    if (batch.waiting <= 0) return;
    if (batch.executing === 0 || batch.waiting >= batch.maxSize) {
      batch.want = "force";
      this.kick(false);
      return;
    }
    batch.timer ??= setTimeout(() => {
      batch.timer = null;
      batch.want ??= "due";
      this.kick(false);
    }, batch.timeoutMs);
    batch.timer.unref?.();
  }

  /**
   * One run per cron slot, across every runner sharing the database: the slot is the run's event
   * id. Only the latest slot is run, as Inngest does after downtime (no backfill).
   */
  private async scheduleCrons() {
    const now = new Date();
    const rows = this.crons.flatMap((entry) => {
      if (now.getTime() < entry.due) return [];
      const { last: slot, next } = cronSlots(entry.cron, now);
      entry.due = next;
      if (slot <= entry.scheduled) return [];
      entry.scheduled = slot;
      const eventId = `cron:${entry.cron}:${new Date(slot).toISOString()}`;
      return [{ id: `run_${crypto.randomUUID()}`, functionId: functionId(entry.fn), eventId, event: { name: CRON_EVENT, data: { cron: entry.cron }, id: eventId, ts: slot }, steps: { order: [], state: {} } }];
    });
    if (rows.length) await this.db.insert(functionRuns).values(rows).onConflictDoNothing();
  }

  async start() {
    if (!this.stopped) return;
    this.stopped = false;
    if (this.opts.exclusive) {
      await this.db.update(functionRuns).set({ lockedUntil: null }).where(eq(functionRuns.status, "running"));
    }
    this.kick();
  }

  /**
   * Stops claiming runs and waits for those in flight, at most `graceMs`: the runs still executing
   * then are handed over (lease released, heartbeat stopped), so another instance, or this one
   * restarted, takes them at once instead of when the lease would have expired. Their stored steps
   * make that safe: a step that had not finished is run again, as after a crash. Answers how many
   * runs were handed over.
   */
  async stop(graceMs = Infinity): Promise<number> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    for (const batch of this.batches.values()) {
      if (batch.timer) clearTimeout(batch.timer);
      batch.timer = null;
    }
    let timeout: NodeJS.Timeout | undefined;
    const settled = Promise.allSettled([...this.active]).then(() => true);
    const waited = Number.isFinite(graceMs) ? Promise.race([settled, new Promise<false>((r) => (timeout = setTimeout(() => r(false), graceMs)))]) : settled;
    const finished = await waited;
    clearTimeout(timeout);
    if (finished || this.executing.size === 0) return 0;
    const ids = [...this.executing];
    for (const id of ids) clearInterval(this.heartbeats.get(id));
    this.heartbeats.clear();
    await this.db
      .update(functionRuns)
      .set({ lockedUntil: null, updatedAt: sql`now()` })
      .where(and(inArray(functionRuns.id, ids), eq(functionRuns.status, "running")));
    return ids.length;
  }

  /**
   * Whether this runner is taking runs: started, and its last look for due runs recent and without
   * error. The error is named, not quoted (readiness is public; the log has the error itself).
   */
  health(now = Date.now()): { ok: boolean; executing: number; lastTickMsAgo: number | null; error: string | null } {
    const lastTickMsAgo = this.lastTick.at ? now - this.lastTick.at : null;
    const recent = lastTickMsAgo !== null && lastTickMsAgo < Math.max(10_000, this.opts.pollMs * 10);
    const error = this.lastTick.failed ? "the last look for due runs failed (see the log)" : null;
    return { ok: !this.stopped && recent && !error, executing: this.executing.size, lastTickMsAgo, error };
  }

  /** Wakes the runner now instead of at the next poll; `claim` false: only to form batches. */
  kick(claim = true) {
    if (claim) this.claimWanted = true;
    if (this.stopped) return;
    if (this.ticking) {
      this.again = true;
      return;
    }
    void this.tick();
  }

  private schedule(ms: number) {
    if (this.stopped) return;
    if (this.timer) clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      // The poll also forms batches other instances' events are due for (their timeout passed).
      for (const batch of this.batches.values()) batch.want ??= "due";
      this.kick();
    }, ms);
    this.timer.unref?.();
  }

  private async tick() {
    this.ticking = true;
    try {
      if (this.crons.length) await this.scheduleCrons();
      do {
        this.again = false;
        if (this.opts.concurrency - this.active.size <= 0 || this.byId.size === 0) break;
        await this.formBatches();
        const free = this.opts.concurrency - this.active.size;
        if (!this.claimWanted || free <= 0) continue;
        this.claimWanted = false;
        for (const run of await this.claim(free)) this.begin(run);
      } while (this.again && !this.stopped);
      this.lastTick = { at: Date.now(), failed: false };
    } catch (err) {
      log.error({ err }, "embedded runner: could not schedule or claim runs");
      this.lastTick = { at: Date.now(), failed: true };
    } finally {
      this.ticking = false;
      this.schedule(this.opts.pollMs);
    }
  }

  private begin(run: RunRow) {
    const batch = this.batches.get(run.functionId);
    if (batch) batch.executing++;
    const job = this.execute(run)
      .catch((err: unknown) => log.error({ runId: run.id, function: run.functionId, err }, "function run crashed the runner"))
      .finally(() => {
        this.active.delete(job);
        if (batch) {
          batch.executing--;
          this.nudgeBatch(batch);
        }
        this.kick();
      });
    this.active.add(job);
  }

  /** Forms the batches wanted (while slots are free; full ones one after another) and starts them. */
  private async formBatches() {
    for (const [id, batch] of this.batches) {
      while (batch.want && this.opts.concurrency - this.active.size > 0) {
        const force = batch.want === "force";
        batch.want = null;
        const run = await formBatch(this.db, id, batch, { force, leaseMs: this.opts.leaseMs });
        if (!run) {
          // Forced and none waiting: another instance batched ours.
          if (force) batch.waiting = 0;
          break;
        }
        const size = run.events?.length ?? 1;
        batch.waiting = Math.max(0, batch.waiting - size);
        if (batch.timer && batch.waiting === 0) {
          clearTimeout(batch.timer);
          batch.timer = null;
        }
        this.begin(run);
        // A full batch may have left more behind: another if those are due too.
        if (size >= batch.maxSize) batch.want = "due";
      }
    }
  }

  /**
   * Claims up to `limit` due runs, fairly across projects: each project's due runs are ranked
   * oldest first, a project's rank adding to the runs it already has in flight (in any instance),
   * and no project gets more than its share at once. So one project's thousand queued relays take
   * turns with another's single one instead of holding every slot. Two instances picking the same
   * run is settled by the update, which takes only runs still unleased.
   */
  private async claim(limit: number): Promise<RunRow[]> {
    const ids = [...this.byId.keys()];
    const lease = `${this.opts.leaseMs} milliseconds`;
    // The project a run works for, as its event names it (every job about a project does: lib/jobs/messages.ts); any other run is its own.
    const share = sql<string>`coalesce(${functionRuns.event}->'data'->>'projectId', ${functionRuns.id})`;
    const unleased = sql`(${functionRuns.lockedUntil} is null or ${functionRuns.lockedUntil} < now())`;
    const due = this.db
      .select({
        id: functionRuns.id,
        status: functionRuns.status,
        runAt: functionRuns.runAt,
        share: share.as("share"),
        turn: sql<number>`row_number() over (partition by ${share} order by ${functionRuns.runAt})`.as("turn"),
      })
      .from(functionRuns)
      .where(
        and(
          inArray(functionRuns.status, ["queued", "running"]),
          inArray(functionRuns.functionId, ids),
          sql`${functionRuns.runAt} <= now()`,
          unleased,
          this.executing.size ? notInArray(functionRuns.id, [...this.executing]) : undefined,
        ),
      )
      .as("due");
    const busy = this.db
      .select({ share: share.as("busy_share"), running: sql<number>`count(*)`.as("running") })
      .from(functionRuns)
      .where(and(eq(functionRuns.status, "running"), sql`${functionRuns.lockedUntil} >= now()`))
      .groupBy(share)
      .as("busy");
    const rank = sql`${due.turn} + coalesce(${busy.running}, 0)`;
    const picked = this.db
      .select({ id: sql<string>`${due.id}`.as("picked_id"), was: sql<string>`${due.status}`.as("was") })
      .from(due)
      .leftJoin(busy, eq(busy.share, due.share))
      .where(sql`${rank} <= ${this.opts.projectShare}`)
      .orderBy(rank, due.runAt)
      .limit(limit)
      .as("picked");
    const claimed = await this.db
      .update(functionRuns)
      .set({ status: "running", lockedUntil: sql`now() + ${lease}::interval`, updatedAt: sql`now()` })
      .from(picked)
      .where(and(eq(functionRuns.id, picked.id), inArray(functionRuns.status, ["queued", "running"]), unleased))
      .returning({ ...getTableColumns(functionRuns), was: picked.was });
    // A run found "running" was leased by a process that stopped renewing it: died, or lost its database.
    for (const run of claimed.filter((r) => r.was === "running")) {
      metrics.takeovers.inc({ function: run.functionId });
      log.warn({ runId: run.id, function: run.functionId, eventId: run.eventId, attempt: run.attempt }, "run taken over after its lease expired");
    }
    return claimed;
  }

  private async save(id: string, fields: Partial<typeof functionRuns.$inferInsert>, keepLease = true) {
    const lease = `${this.opts.leaseMs} milliseconds`;
    await this.db
      .update(functionRuns)
      .set({ ...fields, ...(keepLease ? { lockedUntil: sql`now() + ${lease}::interval` } : {}), updatedAt: sql`now()` })
      .where(eq(functionRuns.id, id));
  }

  private retryAt(attempt: number) {
    return new Date(Date.now() + Math.min(this.opts.retryBaseMs * 2 ** (attempt - 1), 60_000));
  }

  private start_(fn: AnyFunction, run: RunRow, order: string[], state: StepState, attempt: number, requestedRunStep?: string) {
    const event = { name: run.event.name, data: run.event.data, id: run.event.id, ts: run.event.ts };
    const execution = (fn as unknown as { createExecution(o: unknown): { start(): Promise<ExecutionResult> } }).createExecution({
      partialOptions: {
        runId: run.id,
        client: inngest,
        data: { runId: run.id, attempt, event, events: run.events ?? [event] },
        reqArgs: [],
        headers: {},
        stepCompletionOrder: order,
        stepState: Object.fromEntries(Object.entries(state).map(([id, s]) => [id, { ...s }])),
        stepMode: StepMode.Async,
        disableImmediateExecution: false,
        isFailureHandler: false,
        timer: new ServerTiming.ServerTiming(silent as never),
        requestedRunStep,
      },
    });
    return execution.start();
  }

  /** Keeps the run's lease while it executes: a step may well outlast it (a bundle waiting to be mined). */
  private async execute(run: RunRow): Promise<void> {
    this.executing.add(run.id);
    const lease = `${this.opts.leaseMs} milliseconds`;
    const renew = async () => {
      await this.db
        .update(functionRuns)
        .set({ lockedUntil: sql`now() + ${lease}::interval` })
        .where(and(eq(functionRuns.id, run.id), eq(functionRuns.status, "running")));
    };
    const heartbeat = setInterval(() => void renew().catch(() => {}), Math.max(10, Math.floor(this.opts.leaseMs / 3)));
    heartbeat.unref?.();
    this.heartbeats.set(run.id, heartbeat);
    const started = performance.now();
    try {
      const outcome = await this.executeSteps(run);
      metrics.runs.inc({ function: run.functionId, outcome });
      metrics.runSeconds.observe({ function: run.functionId }, (performance.now() - started) / 1000);
      const fields = { runId: run.id, function: run.functionId, eventId: run.eventId, attempt: run.attempt, outcome, durationMs: Math.round(performance.now() - started) };
      if (outcome === "failed") log.error(fields, "run");
      else log.info(fields, "run");
    } finally {
      clearInterval(heartbeat);
      this.heartbeats.delete(run.id);
      this.executing.delete(run.id);
    }
  }

  /** Executes the run's steps until it ends, sleeps or is to be retried: which of those it was. */
  private async executeSteps(run: RunRow): Promise<"completed" | "failed" | "retry" | "sleeping"> {
    const fn = this.byId.get(run.functionId)!;
    const maxRetries = (fn.opts as { retries?: number }).retries ?? DEFAULT_RETRIES;
    const order = [...run.steps.order];
    const state: StepState = { ...run.steps.state };
    let attempt = run.attempt;
    let requested: string | undefined;
    for (;;) {
      const result = await this.start_(fn, run, order, state, attempt, requested);
      requested = undefined;
      switch (result.type) {
        case "step-ran": {
          const step = result.step;
          if (step.error !== undefined && step.op !== "StepRun") {
            if (result.retriable !== false && attempt < maxRetries) {
              await this.save(run.id, { status: "queued", attempt: attempt + 1, runAt: this.retryAt(attempt + 1), steps: { order, state }, lockedUntil: null }, false);
              return "retry";
            }
            state[step.id] = { id: step.id, error: step.error };
          } else {
            state[step.id] = { id: step.id, data: step.data ?? null };
          }
          order.push(step.id);
          attempt = 0;
          await this.save(run.id, { attempt, steps: { order, state } });
          continue;
        }
        case "steps-found": {
          const planned = result.steps.find((s) => s.op === "StepPlanned");
          if (planned) {
            requested = planned.id;
            continue;
          }
          const sleeps = result.steps.filter((s) => s.op === "Sleep");
          if (sleeps.length !== result.steps.length) {
            const ops = [...new Set(result.steps.map((s) => s.op))].join(", ");
            await this.save(run.id, { status: "failed", error: `the embedded runner does not support ${ops}`, lockedUntil: null }, false);
            return "failed";
          }
          let wake = 0;
          for (const sleep of sleeps) {
            wake = Math.max(wake, wakeTime(sleep.name ?? "0ms"));
            state[sleep.id] = { id: sleep.id, data: null };
            order.push(sleep.id);
          }
          if (wake > Date.now()) {
            await this.save(run.id, { status: "queued", attempt: 0, runAt: new Date(wake), steps: { order, state }, lockedUntil: null }, false);
            return "sleeping";
          }
          continue;
        }
        case "function-resolved":
          await this.save(run.id, { status: "completed", output: (result.data ?? null) as never, steps: { order, state }, lockedUntil: null }, false);
          return "completed";
        case "function-rejected": {
          if (result.retriable !== false && attempt < maxRetries) {
            await this.save(run.id, { status: "queued", attempt: attempt + 1, runAt: this.retryAt(attempt + 1), steps: { order, state }, lockedUntil: null }, false);
            return "retry";
          }
          const error = result.error as { message?: string } | undefined;
          await this.save(run.id, { status: "failed", error: error?.message ?? String(result.error), steps: { order, state }, lockedUntil: null }, false);
          return "failed";
        }
        default:
          await this.save(run.id, { status: "failed", error: `unexpected execution result ${result.type}`, lockedUntil: null }, false);
          return "failed";
      }
    }
  }
}

type ExecutionResult =
  | { type: "step-ran"; step: { id: string; op: string; data?: unknown; error?: unknown }; retriable?: boolean | string }
  | { type: "steps-found"; steps: { id: string; op: string; name?: string }[] }
  | { type: "function-resolved"; data: unknown }
  | { type: "function-rejected"; error: unknown; retriable: boolean | string }
  | { type: "step-not-found" | "change-mode" };

const state = processSingleton("runner", () => ({ runner: undefined as EmbeddedRunner | undefined }));

/** The process's runner (embedded mode), started once. */
export async function startEmbeddedRunner(db: Db, functions: AnyFunction[], options?: RunnerOptions): Promise<EmbeddedRunner> {
  if (!state.runner) {
    state.runner = new EmbeddedRunner(db, functions, options);
    await state.runner.start();
  }
  return state.runner;
}

export const embeddedRunner = () => state.runner;
