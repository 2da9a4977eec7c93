// Helpers shared by the benchmarks.
import crypto from "node:crypto";
import { performance } from "node:perf_hooks";
import { startAnvil } from "@/lib/chain/anvil";
import { prepareChain } from "@/lib/chain/contracts";
import { findChain, type ChainConfig } from "@/lib/chain/registry";

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
    const res = await fetch(base + path, {
      method,
      headers: { authorization: `Bearer ${secret}`, ...(json === undefined ? {} : { "content-type": "application/json" }) },
      body: json === undefined ? undefined : JSON.stringify(json),
    });
    const text = await res.text();
    if (res.status !== 200) throw new Error(`${method} ${path.split("?")[0]}: ${res.status} ${text.slice(0, 500)}`);
    return JSON.parse(text) as T;
  };
}

export type Api = ReturnType<typeof apiClient>;

/**
 * A fresh anvil chain 31337 on a free port (1 s blocks, transactions mined at once) with our contracts, which the
 * server started afterwards uses (LOCAL_CHAINS, CHAIN_31337_RPC_URL). The bench and the server share a master key
 * (KEY_ENCRYPTION_KEY, random unless set) so both see the same paymaster and service keys.
 */
export async function startBenchChain(): Promise<{ chain: ChainConfig; stop: () => Promise<void> }> {
  process.env.KEY_ENCRYPTION_KEY ??= crypto.randomBytes(32).toString("hex");
  const node = await startAnvil({ chainId: 31337, port: 0 });
  process.env.LOCAL_CHAINS = "31337";
  process.env.CHAIN_31337_RPC_URL = node.rpcUrl;
  const chain = findChain(31337)!;
  await prepareChain(chain);
  return { chain, stop: () => node.stop() };
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
  firstError?: string;
}
