// The per-chain queue: ops arriving within the batch window share one bundle per EntryPoint; through a bundler, each
// is sent at once.
import type { Address } from "viem";
import { badRequest } from "@/lib/errors";
import { chainEntryPoints, type ChainConfig } from "@/lib/chain/registry";
import { userOperationHash, userOperationHashV08, type UserOp, type UserOpV08 } from "@/lib/chain/userop";
import { orderForBundle, relayBundle, relayThroughBundler, type Entry } from "./bundle";
import { relayFor, state, type ChainRelay, type QueuedOp } from "./config";
import type { RelayResult } from "./types";
import { metrics } from "@/lib/metrics";

export interface EnqueueV08Options {
  entryPointVersion: "0.8";
  /**
   * For an op re-sending the EIP-7702 marker (factory 0x7702) without its authorization: the sender's current
   * delegate, which the EntryPoint hashes in its place (see userOperationHashV08).
   */
  delegate?: Address;
}

/** v0.8-only fields on an op said to be v0.6, or the reverse: a caller passing the wrong version would hash it wrongly. */
const V08_FIELDS = ["factory", "factoryData", "paymaster", "paymasterData", "paymasterVerificationGasLimit", "paymasterPostOpGasLimit"];
const V06_FIELDS = ["initCode", "paymasterAndData"];
const present = (op: object, fields: string[]) => fields.filter((f) => (op as Record<string, unknown>)[f] !== undefined);

/**
 * Queues a signed op for the next bundle on its chain: ops arriving within batchWindowMs of the first (up to
 * maxBundleSize) share one handleOps transaction per EntryPoint. Resolves once the bundle is mined with the op's
 * receipt (its call may still have reverted: receipt.success), or rejects with why the op was left out. The same op
 * enqueued twice shares one outcome. Through a bundler, the op is sent at once.
 * An EntryPoint v0.8 op (UserOpV08) is enqueued with `{ entryPointVersion: "0.8" }`; if it carries an EIP-7702
 * `authorization`, its bundle goes as a type-4 transaction with it.
 */
export function enqueue(chain: ChainConfig, op: UserOp): Promise<RelayResult>;
export function enqueue(chain: ChainConfig, op: UserOpV08, options: EnqueueV08Options): Promise<RelayResult>;
export function enqueue(chain: ChainConfig, op: UserOp | UserOpV08, options?: EnqueueV08Options): Promise<RelayResult> {
  let entry: Entry;
  try {
    entry = entryOf(chain, op, options);
  } catch (err) {
    return Promise.reject(err);
  }
  const { hash } = entry;
  const relay = relayFor(chain);
  const existing = relay.pending.get(hash);
  if (existing) return existing;
  let promise: Promise<RelayResult>;
  if (chain.bundlerUrl) {
    promise = relayThroughBundler(chain, entry);
  } else {
    promise = new Promise<RelayResult>((resolve, reject) => relay.queue.push({ ...entry, resolve, reject }));
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

function entryOf(chain: ChainConfig, op: UserOp | UserOpV08, options?: EnqueueV08Options): Entry {
  if (options?.entryPointVersion === "0.8") {
    const wrong = present(op, V06_FIELDS);
    if (wrong.length > 0) throw badRequest(`An EntryPoint v0.8 operation has no ${wrong.join(" or ")} (v0.6 fields).`);
    if (!chainEntryPoints(chain).includes("0.8")) {
      throw badRequest(`Chain ${chain.chainId} does not offer EntryPoint v0.8.`);
    }
    const v08 = op as UserOpV08;
    return { version: "0.8", op: v08, hash: userOperationHashV08(chain, v08, options.delegate) };
  }
  const wrong = present(op, V08_FIELDS);
  if (wrong.length > 0) throw new Error(`enqueue: an op with ${wrong.join(", ")} is an EntryPoint v0.8 op: pass { entryPointVersion: "0.8" }`);
  return { version: "0.6", op: op as UserOp, hash: userOperationHash(chain, op as UserOp) };
}

function flush(chain: ChainConfig, relay: ChainRelay) {
  if (relay.timer) clearTimeout(relay.timer);
  relay.timer = null;
  const batch = relay.queue.splice(0, state().config.maxBundleSize);
  if (relay.queue.length > 0) relay.timer = setTimeout(() => flush(chain, relay), 0);
  if (batch.length === 0) return;
  // One handleOps transaction per EntryPoint.
  for (const version of ["0.6", "0.8"] as const) {
    const ops = batch.filter((queued) => queued.version === version);
    if (ops.length > 0) relayQueued(chain, ops);
  }
}

function relayQueued(chain: ChainConfig, batch: QueuedOp[]) {
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
