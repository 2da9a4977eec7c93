import {
  BaseError,
  createPublicClient,
  createWalletClient,
  fallback,
  ExecutionRevertedError,
  HttpRequestError,
  http,
  InternalRpcError,
  InvalidInputRpcError,
  LimitExceededRpcError,
  ResourceUnavailableRpcError,
  TimeoutError,
  type Account,
  type PublicClient,
  type Transport,
  type Chain,
  type WalletClient,
} from "viem";
import { noteRemoteCall } from "@/lib/db/transaction-guard";
import { badGateway } from "@/lib/errors";
import { rpcUrlsOf, viemChain, type ChainConfig } from "./registry";
import { rpcFetch } from "./rpc-fetch";
import { processSingleton } from "@/lib/singleton";

const cache = processSingleton("publicClients", () => new Map<string, PublicClient>());

/**
 * Requests made in the same tick go as one JSON-RPC batch (RPC_BATCH=false turns it off, for a node that refuses
 * batches): an intent's build asks for nonce, code, balances and fees at once, and many intents build at once.
 */
const batch = () => process.env.RPC_BATCH !== "false";

/** A node's transport: requests seen in the caller's async context (a batch is sent later, from a timer: lib/db/transaction-guard.ts). */
const noted = (chain: ChainConfig, inner: Transport): Transport => (options) => {
  const made = inner(options);
  return { ...made, request: ((args, more) => (noteRemoteCall(`chain ${chain.chainId} ${args.method}`), made.request(args, more))) as typeof made.request };
};

// rpcFetch: node:http on kept-alive sockets instead of the global fetch (about 0.5 ms less CPU per request).
const nodeTransport = (url: string, timeout = 10_000, retryCount = 1) => http(url, { timeout, retryCount, batch: batch(), fetchFn: rpcFetch });

/** A node that hangs is given up sooner when another can answer instead. */
const FALLBACK_NODE_TIMEOUT_MS = 5_000;

/**
 * The chain's transport: its node, or with several (a comma list) viem's fallback over them, ranked by latency and
 * stability (each node is asked for the block number every 10 s), so a failing or slow node is passed over.
 */
const transport = (chain: ChainConfig): Transport => {
  const urls = rpcUrlsOf(chain.rpcUrl);
  if (urls.length <= 1) return noted(chain, nodeTransport(urls[0] ?? chain.rpcUrl));
  return noted(
    chain,
    fallback(
      urls.map((url) => nodeTransport(url, FALLBACK_NODE_TIMEOUT_MS)),
      { rank: { interval: 10_000, sampleCount: 6, weights: { latency: 0.3, stability: 0.7 } }, retryCount: 1 },
    ),
  );
};

/** The node a chain's reads go to: what per-chain caches are keyed by (a chain pointed at another node starts afresh). */
export const chainKey = (chain: ChainConfig) => `${chain.chainId}:${chain.rpcUrl}`;

export function publicClient(chain: ChainConfig): PublicClient {
  const key = chainKey(chain);
  let client = cache.get(key);
  if (!client) {
    client = createPublicClient({ chain: viemChain(chain), transport: transport(chain) }) as PublicClient;
    cache.set(key, client);
  }
  return client;
}

const preferred = processSingleton("preferredNode", () => new Map<string, number>());

/**
 * One node of the chain, for reads that must not mix two nodes' heads (what the ledger and confirmations decide: a
 * head from one node and a block from another that lags would look like a reorg). The same node until `nodeFailed`
 * moves to the next; a chain with one node has only publicClient's.
 */
export function nodeClient(chain: ChainConfig): PublicClient {
  const urls = rpcUrlsOf(chain.rpcUrl);
  if (urls.length <= 1) return publicClient(chain);
  const index = (preferred.get(chainKey(chain)) ?? 0) % urls.length;
  const key = `${chainKey(chain)}#${index}`;
  let client = cache.get(key);
  if (!client) {
    // Retried on the same node (no other to ask: its head must not mix with another's).
    client = createPublicClient({ chain: viemChain(chain), transport: noted(chain, nodeTransport(urls[index]!, 10_000, 3)) }) as PublicClient;
    cache.set(key, client);
  }
  return client;
}

/** The node nodeClient gave failed a pass: the next one is taken from now on. */
export function nodeFailed(chain: ChainConfig): void {
  const urls = rpcUrlsOf(chain.rpcUrl);
  if (urls.length > 1) preferred.set(chainKey(chain), ((preferred.get(chainKey(chain)) ?? 0) + 1) % urls.length);
}

export function walletClient(chain: ChainConfig, account: Account): WalletClient<Transport, Chain, Account> {
  return createWalletClient({ chain: viemChain(chain), transport: transport(chain), account });
}

/** True when the error means the chain's node could not be reached (as opposed to an answer we dislike). */
export function isUnreachable(err: unknown): boolean {
  if (!(err instanceof BaseError)) return false;
  return Boolean(err.walk((e) => e instanceof HttpRequestError || e instanceof TimeoutError));
}

/**
 * True when the node failed the request rather than answered it: unreachable, or a JSON-RPC error of the node itself
 * (internal error, resource unavailable, limit exceeded, a lost answer) that is not an execution revert. What reaches
 * the API's error mapping this way is the node's fault, to retry: 502, never a 500.
 */
export function isNodeFault(err: unknown): boolean {
  if (isUnreachable(err)) return true;
  if (!(err instanceof BaseError)) return false;
  if (err.walk((e) => e instanceof ExecutionRevertedError)) return false;
  return Boolean(
    err.walk(
      (e) =>
        (e instanceof InternalRpcError || e instanceof ResourceUnavailableRpcError || e instanceof LimitExceededRpcError || e instanceof InvalidInputRpcError) &&
        !/revert/i.test((e as BaseError).details ?? (e as BaseError).message),
    ),
  );
}

export const chainUnavailable = (chain: ChainConfig) =>
  badGateway(`The node for chain ${chain.chainId} (${chain.name}) did not answer. Try again shortly.`);

/** Runs a chain call, answering 502 when the node is unreachable or failed it (the RPC URL, which may hold credentials, is never shown). */
export async function onChain<T>(chain: ChainConfig, call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (err) {
    if (isNodeFault(err)) throw chainUnavailable(chain);
    throw err;
  }
}
