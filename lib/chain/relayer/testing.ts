// Test hooks for the relayer, not for production code: reconfigure and reset it, read its executors, status and
// events, and send bundles directly instead of through the queue.
import type { Address, Hex } from "viem";
import { publicClient } from "@/lib/chain/clients";
import type { ChainConfig } from "@/lib/chain/registry";
import { chainFees, userOperationHash, type UserOp } from "@/lib/chain/userop";
import { orderForBundle, relayBundle, relayThroughBundler, type Entry } from "./bundle";
import { relayFor, state, type RelayerConfig } from "./config";
import type { BundleResult, RelayResult } from "./types";

export { relayerEvents } from "./config";
export { waitForUserOperationReceipt } from "./receipts";

/** Overrides configuration for this process (tests, boot); executors are re-derived on the next bundle. */
export function configureRelayer(options: Partial<RelayerConfig>): RelayerConfig {
  const s = state();
  s.config = { ...s.config, ...options };
  for (const relay of s.chains.values()) relay.executors = [];
  return s.config;
}

/**
 * Forgets all in-memory relay state (queues, locally tracked nonces), as a restart would. Queued ops that were not
 * sent are rejected; bundles already sent keep being awaited by their callers.
 */
export function resetRelayer(): void {
  const s = state();
  for (const relay of s.chains.values()) {
    if (relay.timer) clearTimeout(relay.timer);
    for (const queued of relay.queue) queued.reject(new Error("The relayer was reset before this operation was sent"));
  }
  s.chains.clear();
}

/** The executor addresses the relayer uses on `chain`. */
export const executorAddresses = (chain: ChainConfig): Address[] => relayFor(chain).executors.map((e) => e.account.address);

/** Executors and their balances; `low` when one cannot pay for a few large bundles at today's fees. */
export async function relayerStatus(chain: ChainConfig) {
  const client = publicClient(chain);
  const fees = await chainFees(chain);
  const lowBelow = state().config.maxBundleGas * fees.maxFeePerGas * 3n;
  return Promise.all(
    relayFor(chain).executors.map(async (executor) => {
      const balance = await client.getBalance({ address: executor.account.address });
      return { address: executor.account.address, balance, low: balance < lowBelow, inflight: executor.inflight };
    }),
  );
}

/**
 * Sends the ops in ONE EntryPoint.handleOps transaction from one of our executors (beneficiary: the executor) and
 * waits for it to be mined, bumping its fees while it is stuck. Ops that fail simulation are left out (`dropped`) so
 * they never sink the others; ops already on chain come back with their existing receipt and are not resent. With
 * `chain.bundlerUrl`, each op goes to the bundler (eth_sendUserOperation) instead.
 */
export async function submitUserOperations(chain: ChainConfig, ops: UserOp[]): Promise<BundleResult> {
  if (ops.length === 0) throw new Error("submitUserOperations: no operations");
  const entries = ops.map((op): Entry => ({ version: "0.6", op, hash: userOperationHash(chain, op) }));
  if (chain.bundlerUrl) return submitThroughBundler(chain, entries);
  const result = await relayBundle(chain, orderForBundle(entries), 0);
  if (!("included" in result)) throw result.error;
  return result;
}

async function submitThroughBundler(chain: ChainConfig, entries: Entry[]): Promise<BundleResult> {
  const results = await Promise.allSettled(entries.map((entry) => relayThroughBundler(chain, entry)));
  const included: RelayResult[] = [];
  const dropped: { userOpHash: Hex; error: Error }[] = [];
  results.forEach((result, i) => {
    if (result.status === "fulfilled") included.push(result.value);
    else dropped.push({ userOpHash: entries[i]!.hash, error: result.reason as Error });
  });
  const first = included[0];
  if (!first) throw dropped[0]!.error;
  return { transactionHash: first.transactionHash, executor: null, blockNumber: first.receipt.blockNumber, gasUsed: 0n, included, dropped };
}
