// Chain reads that many concurrent requests make alike (the latest block, fees): one fetch serves every caller that
// asks while it is in flight. Nothing is kept after the answer, so no caller gets a block older than its request
// by more than that fetch's round trip (a cached one could predate a time jump, or a base fee rise).
import { BlockNotFoundError, type Block } from "viem";
import { chainKey, publicClient } from "./clients";
import type { ChainConfig } from "./registry";

const inflight = new Map<string, Promise<unknown>>();

/** `fetch()` of `what` on the chain, shared by every caller asking for the same while it runs. */
export function coalesce<T>(chain: ChainConfig, what: string, fetch: () => Promise<T>): Promise<T> {
  const key = `${chainKey(chain)}:${what}`;
  const running = inflight.get(key) as Promise<T> | undefined;
  if (running) return running;
  const promise = fetch().finally(() => inflight.delete(key));
  inflight.set(key, promise);
  return promise;
}

/** The chain's latest block (eth_getBlockByNumber "latest"), coalesced. */
export const latestBlock = (chain: ChainConfig): Promise<Block> => coalesce(chain, "latest-block", () => publicClient(chain).getBlock({ blockTag: "latest" }));

/** How often, and how far apart, a block a receipt names is asked for again when the answering node lacks it. */
const BLOCK_TRIES = 4;
const BLOCK_RETRY_MS = 500;

/**
 * Block `number`, coalesced (the ops of one bundle record their landing at once). A receipt from one node names a
 * block another (behind it) may not have yet: that one is asked again a few times before the error stands.
 */
export const blockAt = (chain: ChainConfig, number: bigint): Promise<Block> =>
  coalesce(chain, `block:${number}`, async () => {
    for (let attempt = 1; ; attempt++) {
      try {
        return await publicClient(chain).getBlock({ blockNumber: number });
      } catch (err) {
        if (!(err instanceof BlockNotFoundError) || attempt >= BLOCK_TRIES) throw err;
        await new Promise((r) => setTimeout(r, BLOCK_RETRY_MS));
      }
    }
  });
