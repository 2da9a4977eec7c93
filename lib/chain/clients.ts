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
import { log } from "@/lib/log";

const cache = processSingleton("publicClients", () => new Map<string, PublicClient>());

/**
 * Requests made in the same tick go as one JSON-RPC batch (RPC_BATCH=false turns it off, for a node that refuses
 * batches): an intent's build asks for nonce, code, balances and fees at once, and many intents build at once.
 */
const batch = () => process.env.RPC_BATCH !== "false";

/** An answer slower than this (retries and other nodes included) is logged: what a relay's latency is made of. */
const SLOW_ANSWER_MS = 2_000;

/**
 * A node's transport: requests seen in the caller's async context (a batch is sent later, from a timer:
 * lib/db/transaction-guard.ts), and slow answers logged with their method.
 */
const noted = (chain: ChainConfig, inner: Transport): Transport => (options) => {
  const made = inner(options);
  const request = async (args: { method: string }, more?: unknown) => {
    noteRemoteCall(`chain ${chain.chainId} ${args.method}`);
    const started = performance.now();
    try {
      return await (made.request as (a: unknown, m?: unknown) => Promise<unknown>)(args, more);
    } finally {
      const ms = Math.round(performance.now() - started);
      if (ms > SLOW_ANSWER_MS) log.warn({ chainId: chain.chainId, method: args.method, ms }, "chain: a slow answer from the node");
    }
  };
  return { ...made, request: request as typeof made.request };
};

/**
 * Methods a healthy node answers from what it holds, without executing or scanning anything: the relay's reads (head,
 * nonces, code, fees, receipts) and its sends. A request of these alone that is not answered within QUICK_ANSWER_MS
 * is given up on when the chain has another node: retried, then asked of the next one. A hung request then costs
 * 2 s of an op's way to its block instead of the whole timeout (the chain drill's probe counts those blocks).
 * Calls that execute (eth_call, eth_estimateGas) or scan (eth_getLogs) keep the full timeout.
 */
const QUICK_METHODS = new Set([
  "eth_blockNumber",
  "eth_chainId",
  "eth_getTransactionCount",
  "eth_getCode",
  "eth_getBalance",
  "eth_getStorageAt",
  "eth_gasPrice",
  "eth_maxPriorityFeePerGas",
  "eth_feeHistory",
  "eth_getTransactionByHash",
  "eth_getTransactionReceipt",
  "eth_sendRawTransaction",
  "eth_getBlockByNumber",
  "eth_getBlockByHash",
]);
const QUICK_ANSWER_MS = 2_000;

/** Whether a JSON-RPC method is one of QUICK_METHODS (its requests are batched and given up on apart from the others). */
export const isQuickMethod = (method: string) => QUICK_METHODS.has(method);

/** rpcFetch with QUICK_ANSWER_MS: a request of quick methods fails as viem's own timeout does (retried, then the next node). */
const quickFetch: typeof rpcFetch = (input, init = {}) => {
  const { body } = init;
  const quick = new AbortController();
  const timer = setTimeout(() => quick.abort(new TimeoutError({ body: typeof body === "string" ? (JSON.parse(body) as Record<string, unknown>) : {}, url: String(input) })), QUICK_ANSWER_MS);
  const signal = init.signal ? AbortSignal.any([init.signal, quick.signal]) : quick.signal;
  return rpcFetch(input, { ...init, signal }).finally(() => clearTimeout(timer));
};

/**
 * One node's transport. rpcFetch: node:http on kept-alive sockets instead of the global fetch (about 0.5 ms less CPU
 * per request); `quick`: with QUICK_ANSWER_MS (where another node can answer), the quick methods batched apart from
 * the others, so that an eth_call the node sits on never holds a fee or receipt read of the same tick for the whole
 * timeout (seen in the chain drill: a relay's fees waited 5 s behind an intent's build).
 */
const nodeTransport = (url: string, timeout = 10_000, retryCount = 1, quick = false): Transport => {
  if (!quick) return http(url, { timeout, retryCount, batch: batch(), fetchFn: rpcFetch });
  const reads = http(url, { timeout, retryCount, batch: batch(), fetchFn: quickFetch });
  const calls = http(url, { timeout, retryCount, batch: batch(), fetchFn: rpcFetch });
  return (options) => {
    const [forReads, forCalls] = [reads(options), calls(options)];
    const request = ((args: { method: string }, more?: unknown) =>
      (isQuickMethod(args.method) ? forReads : forCalls).request(args as never, more as never)) as typeof forCalls.request;
    return { ...forCalls, request };
  };
};

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
      // (The fallback asks each node once per round: its own retry goes round them all again.)
      urls.map((url) => nodeTransport(url, FALLBACK_NODE_TIMEOUT_MS, 0, true)),
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
    // Retried on the same node (no other to ask: its head must not mix with another's); a quick read that hangs is
    // retried after QUICK_ANSWER_MS, not after the whole timeout.
    client = createPublicClient({ chain: viemChain(chain), transport: noted(chain, nodeTransport(urls[index]!, 10_000, 3, true)) }) as PublicClient;
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
