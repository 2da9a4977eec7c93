// The relayer's configuration (RELAY_* environment) and its in-memory state: per chain, the executors, the queue and
// the bundler client. Internal to lib/chain/relayer: state() and the helpers here are not re-exported from index.ts.
import { EventEmitter } from "node:events";
import { http, type Hex, type PrivateKeyAccount } from "viem";
import { createBundlerClient } from "viem/account-abstraction";
import { envNumber, envRaw, type EnvNumberRule } from "@/lib/config";
import { serviceAccount } from "@/lib/keys/service-keys";
import { viemChain, type ChainConfig } from "@/lib/chain/registry";
import { rpcFetch } from "@/lib/chain/rpc-fetch";
import type { Entry } from "./bundle";
import type { RelayResult } from "./types";
import { processSingleton } from "@/lib/singleton";

export interface RelayerConfig {
  /** Executor keys per chain: serviceAccount(`executor-${executorOffset + i}`) for i < executors (RELAY_EXECUTORS, 3). */
  executors: number;
  /** First executor index (RELAY_EXECUTOR_OFFSET, 0): instances sharing the master key must use disjoint ranges. */
  executorOffset: number;
  /** How long the queue gathers ops into one bundle after the first arrives (RELAY_BATCH_WINDOW_MS, 20). */
  batchWindowMs: number;
  /** Ops per bundle (RELAY_MAX_BUNDLE, 50); a full queue is sent at once. */
  maxBundleSize: number;
  /** Bundles above this gas are split in two (RELAY_MAX_BUNDLE_GAS, 10M). */
  maxBundleGas: bigint;
  /** Resubmit with fees +12.5% when a bundle is not mined within this (RELAY_BUMP_AFTER_MS; dev chains 3 s, others 30 s). */
  bumpAfterMs: number | null;
  /**
   * Give up waiting for a bundle after this (RELAY_MINE_TIMEOUT_MS, 2 min): its ops go to another bundle. A bundle the
   * node lost is found within a few blocks and sent again before then (waitMined).
   */
  mineTimeoutMs: number;
  /** Receipt polling interval (RELAY_POLL_MS; dev chains 20 ms, others 1 s). */
  pollMs: number | null;
  /** How far back findUserOperationReceipt looks without `fromBlock` (RELAY_RECEIPT_LOOKBACK_BLOCKS, 10000). */
  receiptLookbackBlocks: bigint;
}

// Each setting is a number of at least 0; anything else reads as its default.
const NON_NEGATIVE: EnvNumberRule = { min: 0 };

function configFromEnv(): RelayerConfig {
  return {
    executors: Math.max(1, Math.floor(envNumber("RELAY_EXECUTORS", 3, NON_NEGATIVE))),
    executorOffset: Math.floor(envNumber("RELAY_EXECUTOR_OFFSET", 0, NON_NEGATIVE)),
    batchWindowMs: envNumber("RELAY_BATCH_WINDOW_MS", 20, NON_NEGATIVE),
    maxBundleSize: Math.max(1, Math.floor(envNumber("RELAY_MAX_BUNDLE", 50, NON_NEGATIVE))),
    maxBundleGas: BigInt(Math.floor(envNumber("RELAY_MAX_BUNDLE_GAS", 10_000_000, NON_NEGATIVE))),
    bumpAfterMs: envRaw("RELAY_BUMP_AFTER_MS") ? envNumber("RELAY_BUMP_AFTER_MS", 30_000, NON_NEGATIVE) : null,
    mineTimeoutMs: envNumber("RELAY_MINE_TIMEOUT_MS", 120_000, NON_NEGATIVE),
    pollMs: envRaw("RELAY_POLL_MS") ? envNumber("RELAY_POLL_MS", 1_000, NON_NEGATIVE) : null,
    receiptLookbackBlocks: BigInt(Math.floor(envNumber("RELAY_RECEIPT_LOOKBACK_BLOCKS", 10_000, NON_NEGATIVE))),
  };
}

export interface Executor {
  account: PrivateKeyAccount;
  /** The next nonce to use, tracked locally; null means "ask the chain (pending)". */
  nextNonce: bigint | null;
  /** Serializes nonce assignment and sending. */
  lock: Promise<void>;
  /** Bundles sent and not yet mined. */
  inflight: number;
  /**
   * The hashes of what this process sent at each of its nonces not yet known mined: a nonce the node no longer holds a
   * transaction of ours for (a reorg, a dropped pool) is a gap, filled so the nonces above it can be mined.
   */
  sent: Map<bigint, Hex[]>;
}

export type QueuedOp = Entry & {
  resolve: (result: RelayResult) => void;
  reject: (err: unknown) => void;
};

export interface ChainRelay {
  executors: Executor[];
  queue: QueuedOp[];
  timer: ReturnType<typeof setTimeout> | null;
  /** Ops queued or in a bundle, by userOp hash: the same op enqueued twice shares one outcome. */
  pending: Map<Hex, Promise<RelayResult>>;
  turn: number;
}

interface RelayerState {
  config: RelayerConfig;
  chains: Map<number, ChainRelay>;
  events: EventEmitter;
  bundlers: Map<string, Bundler>;
}

/** Made on first use, so the configuration is read from the environment then. */
export const state = (): RelayerState =>
  processSingleton<RelayerState>("relayer", () => ({ config: configFromEnv(), chains: new Map(), events: new EventEmitter(), bundlers: new Map() }));

/**
 * What the relayer does, for logs and tests: "bundle:sent" {chainId, executor, nonce, transactionHash, fees, ops,
 * replaces?}, "bundle:mined" {chainId, executor, nonce, transactionHash, ops, gasUsed, ms}, "op:dropped"
 * {chainId, userOpHash, error}.
 */
export const relayerEvents = (): EventEmitter => state().events;

export const pollMs = (chain: ChainConfig) => state().config.pollMs ?? (chain.dev ? 20 : 1_000);
export const bumpAfterMs = (chain: ChainConfig) => state().config.bumpAfterMs ?? (chain.dev ? 3_000 : 30_000);
export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export function relayFor(chain: ChainConfig): ChainRelay {
  const s = state();
  let relay = s.chains.get(chain.chainId);
  if (!relay) {
    relay = { executors: [], queue: [], timer: null, pending: new Map(), turn: 0 };
    s.chains.set(chain.chainId, relay);
  }
  if (relay.executors.length === 0) {
    const { executors, executorOffset } = s.config;
    relay.executors = Array.from({ length: executors }, (_, i) => ({
      account: serviceAccount(`executor-${executorOffset + i}`),
      nextNonce: null,
      lock: Promise.resolve(),
      inflight: 0,
      sent: new Map(),
    }));
  }
  return relay;
}

function createBundler(chain: ChainConfig) {
  return createBundlerClient({
    chain: viemChain(chain),
    transport: http(chain.bundlerUrl!, { timeout: 15_000, retryCount: 1, fetchFn: rpcFetch }),
    pollingInterval: pollMs(chain),
  });
}

// The client's inferred type, not viem's BundlerClient: assigning one to the other made tsc compare the two
// generic client types member by member, about two minutes of a clean type check.
type Bundler = ReturnType<typeof createBundler>;

export function bundlerFor(chain: ChainConfig): Bundler {
  const s = state();
  const key = `${chain.chainId}:${chain.bundlerUrl}`;
  let client = s.bundlers.get(key);
  if (!client) {
    client = createBundler(chain);
    s.bundlers.set(key, client);
  }
  return client;
}
