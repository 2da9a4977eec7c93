// Helpers shared by the benchmarks.
import crypto from "node:crypto";
import fs from "node:fs";
import { performance } from "node:perf_hooks";
import { startAnvil } from "@/lib/chain/anvil";
import { prepareChain } from "@/lib/prepare-chains";
import { findChain, type ChainConfig } from "@/lib/chain/registry";
import { request } from "./http";

export const now = () => performance.now();

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** The q-quantile of the values (NaN when there are none). */
export function quantile(values: number[], q: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted.length ? sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]! : NaN;
}

/** Runs task(0) … task(total - 1) on `concurrency` workers, each taking the next index when done. */
export async function pool(concurrency: number, total: number, task: (i: number) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(concurrency, total) }, async () => {
      for (let i = next++; i < total; i = next++) await task(i);
    }),
  );
}

export function envInt(name: string, fallback: number): number {
  const value = Number(process.env[name] ?? fallback);
  if (!Number.isInteger(value) || value < 1) throw new Error(`${name} must be a positive integer`);
  return value;
}

/** A JSON API client with the project's secret key; anything but 200 throws with the error body. */
export function apiClient(base: string, secret: string) {
  return async function api<T>(method: string, path: string, json?: unknown): Promise<T> {
    const { status, text } = await request(base + path, {
      method,
      headers: { authorization: `Bearer ${secret}`, ...(json === undefined ? {} : { "content-type": "application/json" }) },
      body: json === undefined ? undefined : JSON.stringify(json),
    });
    if (status !== 200) throw new Error(`${method} ${path.split("?")[0]}: ${status} ${text.slice(0, 500)}`);
    return JSON.parse(text) as T;
  };
}

export type Api = ReturnType<typeof apiClient>;

/**
 * Fresh anvil chains 31337 and 31338 on free ports (1 s blocks, transactions mined at once), as `npm start` has
 * two; the server started afterwards uses them (LOCAL_CHAINS, CHAIN_<id>_RPC_URL). The intents run on 31337, which
 * gets our contracts here. The bench and the server share a master key (KEY_ENCRYPTION_KEY, random unless set) so
 * both see the same paymaster and service keys.
 */
export async function startBenchChain(): Promise<{ chain: ChainConfig; pids: number[]; stop: () => Promise<void> }> {
  process.env.KEY_ENCRYPTION_KEY ??= crypto.randomBytes(32).toString("hex");
  const nodes = await Promise.all([startAnvil({ chainId: 31337, port: 0 }), startAnvil({ chainId: 31338, port: 0 })]);
  process.env.LOCAL_CHAINS = "31337,31338";
  for (const node of nodes) process.env[`CHAIN_${node.chainId}_RPC_URL`] = node.rpcUrl;
  const chain = findChain(31337)!;
  await prepareChain(chain);
  return { chain, pids: nodes.map((node) => node.pid), stop: async () => void (await Promise.all(nodes.map((node) => node.stop()))) };
}

/**
 * What the benchmarks' and drills' servers credit each new project in test mode on a local chain
 * (SPONSORSHIP_LOCAL_CREDIT, lib/sponsorship/ledger.ts), in coins: enough for their longest runs at anvil's fees (an
 * op costs at most about 0.001–0.005 coin there; the default, 1, covers a few hundred), so that no intent is declined
 * for money. SPONSORSHIP_LOCAL_CREDIT in the environment overrides it.
 */
export const BENCH_CREDIT = "1000";

/** The servers' environment for the sponsorship ledger: BENCH_CREDIT unless SPONSORSHIP_LOCAL_CREDIT is set. */
export const sponsorshipCreditEnv = (): Record<string, string> => ({ SPONSORSHIP_LOCAL_CREDIT: process.env.SPONSORSHIP_LOCAL_CREDIT ?? BENCH_CREDIT });

/** A process's resident set size in MB (Linux). */
export function rssMb(pid: number): number {
  const match = /VmRSS:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${pid}/status`, "utf8"));
  return match ? Number(match[1]) / 1024 : NaN;
}

/** Where the server keeps its data, without credentials. */
export function describeDatabase(env: NodeJS.ProcessEnv): string {
  if (!env.DATABASE_URL) return "embedded PGlite";
  const url = new URL(env.DATABASE_URL);
  return `PostgreSQL ${url.host}${url.pathname}`;
}

/** One run of `total` sponsored ops, through the service or directly. */
export interface RunResult {
  label: string;
  total: number;
  /** Per op: the POST's latency (service), or building, sponsoring and signing it (floor). */
  submitMs: number[];
  /** Per landed op: from the start of its submission until it is seen on chain. */
  landMs: number[];
  /** From the run's start until the last op was submitted / seen on chain. */
  submitSeconds: number;
  landSeconds: number;
  /** Ops (UserOperationEvents) in each bundle transaction of the run. */
  bundleSizes: number[];
  /** Ops refused, failed or not landed in time. */
  failed: number;
  /** Service runs: landed ops with exactly one UserOperationEvent; ops seen twice or landed without an answer. */
  landedOnce?: number;
  duplicated?: number;
  /** The servers' CPU for the bench's own polls and scrapes, ms per landed op: left out of cpu.server. */
  benchServerCpuPerOp?: number;
  /** CPU seconds of the run by process group (cpuMeter). */
  cpu?: Record<string, number>;
  /** Service runs: the list requests the run made to see its intents land (their statements are not the intents'). */
  polls?: number;
  /** Service runs: SQL statements per landed intent (bench/intents.ts: net of the bench's own requests), and PostgreSQL's count of them. */
  statementsPerOp?: number;
  pgStatementsPerOp?: number;
  /** Service runs: how long after its last landing the run's stages took to be all observed (bench/intents.ts, settle). */
  settleSeconds?: number;
  /** Service runs: per stage, the observations of transaction_intent_stage_seconds during the run (bench/metrics.ts). */
  stages?: Map<string, { le: number; count: number }[]>;
  firstError?: string;
}

/**
 * CPU seconds (user + system) of a process and of its children that have exited, or 0 when it is gone. The
 * children's part keeps a group's sum from going down when a member exits: a PostgreSQL backend that closes during
 * a run moves its CPU into the postmaster's.
 */
function cpuSecondsOf(pid: number): number {
  try {
    const fields = fs.readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ");
    return (Number(fields[11]) + Number(fields[12]) + Number(fields[13]) + Number(fields[14])) / 100; // utime, stime, cutime, cstime in clock ticks (100 Hz)
  } catch {
    return 0;
  }
}

/** Pids of the processes named `comm` (e.g. every PostgreSQL backend). */
function pidsNamed(comm: string): number[] {
  return fs
    .readdirSync("/proc")
    .filter((entry) => /^\d+$/.test(entry))
    .map(Number)
    .filter((pid) => {
      try {
        return fs.readFileSync(`/proc/${pid}/comm`, "utf8").trim() === comm;
      } catch {
        return false;
      }
    });
}

export type CpuGroups = Record<string, () => number[]>;

/**
 * CPU seconds per group of processes (server, PostgreSQL, anvil; "client" is this process) since `start()`, to show
 * where a run's CPU went on this 2-core machine. Linux only (empty elsewhere).
 */
export function cpuMeter(groups: CpuGroups) {
  const read = () => {
    const own = process.cpuUsage();
    const totals: Record<string, number> = { client: (own.user + own.system) / 1e6 };
    if (fs.existsSync("/proc/self/stat")) for (const [name, pids] of Object.entries(groups)) totals[name] = pids().reduce((sum, pid) => sum + cpuSecondsOf(pid), 0);
    return totals;
  };
  const before = read();
  return () => {
    const after = read();
    return Object.fromEntries(Object.keys(after).map((name) => [name, after[name]! - (before[name] ?? 0)]));
  };
}

export const postgresPids = () => pidsNamed("postgres");

/** The CPU seconds so far of one group's processes (with their exited children), as cpuMeter counts them. */
export function cpuMeterOnce(groups: CpuGroups, name: string): number {
  const pids = groups[name];
  return pids ? pids().reduce((sum, pid) => sum + cpuSecondsOf(pid), 0) : 0;
}
