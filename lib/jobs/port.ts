import { processSingleton } from "@/lib/singleton";
import type { Job } from "./messages";

/** The runner this process started (embedded mode): stopped at shutdown, answering how many runs it handed over. */
export interface JobRunner {
  stop(graceMs: number): Promise<number>;
}

/** The runner's part of readiness (lib/health.ts): `mode` says where the jobs run. */
export interface JobRunnerHealth {
  ok: boolean;
  mode: string;
  [detail: string]: unknown;
}

/**
 * Where jobs go: the embedded runner or an Inngest server (inngest/jobs.ts). lib/ sends through this port and never
 * imports the function definitions, which import lib/ back; the composition root registers the backend: the server's
 * instrumentation.ts, /api/inngest, the tests' setup (test/jobs-setup.ts).
 */
export interface JobBackend {
  /** Hands jobs over, once each by their id (the runner, if jobs run here, started by then). */
  send(jobs: Job[]): Promise<void>;
  /** Starts this process's runner if jobs run in it, resuming the runs a previous process left; null if they run elsewhere. */
  start(): Promise<JobRunner | null>;
  health(): JobRunnerHealth;
}

// Per process, not per module copy: Next.js bundles instrumentation.ts apart from the route handlers.
const state = processSingleton("jobBackend", (): { backend?: JobBackend } => ({}));

/** Registers where jobs go (undefined: nowhere); answers the backend registered before, so a test can put it back. */
export function registerJobBackend(backend: JobBackend | undefined): JobBackend | undefined {
  const previous = state.backend;
  state.backend = backend;
  return previous;
}

/**
 * The registered backend. None is a wiring error, said loudly rather than a job lost: a process that only runs the
 * CLI never sends one.
 */
export function jobBackend(): JobBackend {
  const backend = state.backend;
  if (!backend) throw new Error("no job backend is registered: the process's entry point must call registerJobs() (inngest/jobs.ts) before jobs are sent");
  return backend;
}

/** Queues background jobs: they run after this returns, once each (a job sent again with the same id starts nothing). */
export const sendJobs = (jobs: Job[]) => jobBackend().send(jobs);

/** Starts the runner at boot (runs left unfinished resume at once, not at the first job sent); null without one here. */
export const startJobRunner = () => jobBackend().start();

export const jobRunnerHealth = (): JobRunnerHealth => state.backend?.health() ?? { ok: false, mode: "none", error: "not started" };
