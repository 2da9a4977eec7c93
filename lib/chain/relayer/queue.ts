// The per-chain queue: ops arriving within the batch window share one bundle; through a bundler, each is sent at once.
import type { ChainConfig } from "@/lib/chain/registry";
import { userOperationHash, type UserOp } from "@/lib/chain/userop";
import { orderForBundle, relayBundle, relayThroughBundler } from "./bundle";
import { relayFor, state, type ChainRelay } from "./config";
import type { RelayResult } from "./types";
import { metrics } from "@/lib/metrics";

/**
 * Queues a signed op for the next bundle on its chain: ops arriving within batchWindowMs of the first (up to
 * maxBundleSize) share one handleOps transaction. Resolves once the bundle is mined with the op's receipt (its call
 * may still have reverted: receipt.success), or rejects with why the op was left out. The same op enqueued twice
 * shares one outcome. Through a bundler, the op is sent at once.
 */
export function enqueue(chain: ChainConfig, op: UserOp): Promise<RelayResult> {
  const relay = relayFor(chain);
  const hash = userOperationHash(chain, op);
  const existing = relay.pending.get(hash);
  if (existing) return existing;
  let promise: Promise<RelayResult>;
  if (chain.bundlerUrl) {
    promise = relayThroughBundler(chain, { op, hash });
  } else {
    promise = new Promise<RelayResult>((resolve, reject) => relay.queue.push({ op, hash, resolve, reject }));
    const { maxBundleSize, batchWindowMs } = state().config;
    if (relay.queue.length >= maxBundleSize) flush(chain, relay);
    else relay.timer ??= setTimeout(() => flush(chain, relay), batchWindowMs);
  }
  relay.pending.set(hash, promise);
  const pendingOps = () => metrics.pendingOps.set({ chain: String(chain.chainId) }, relay.pending.size);
  pendingOps();
  const settled = () => {
    relay.pending.delete(hash);
    pendingOps();
  };
  promise.then(settled, settled);
  return promise;
}

function flush(chain: ChainConfig, relay: ChainRelay) {
  if (relay.timer) clearTimeout(relay.timer);
  relay.timer = null;
  const batch = relay.queue.splice(0, state().config.maxBundleSize);
  if (relay.queue.length > 0) relay.timer = setTimeout(() => flush(chain, relay), 0);
  if (batch.length === 0) return;
  const byHash = new Map(batch.map((queued) => [queued.hash, queued]));
  relayBundle(chain, orderForBundle(batch), 0).then(
    (result) => {
      if ("included" in result) for (const included of result.included) byHash.get(included.userOpHash)?.resolve(included);
      for (const { userOpHash, error } of result.dropped) byHash.get(userOpHash)?.reject(error);
      // Anything not accounted for (cannot happen) must not hang its caller.
      for (const queued of batch) queued.reject(new Error(`Operation ${queued.hash} was not relayed`));
    },
    (err) => {
      for (const queued of batch) queued.reject(err);
    },
  );
}
