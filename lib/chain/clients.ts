import {
  BaseError,
  createPublicClient,
  createWalletClient,
  HttpRequestError,
  http,
  TimeoutError,
  type Account,
  type PublicClient,
  type Transport,
  type Chain,
  type WalletClient,
} from "viem";
import { noteRemoteCall } from "@/lib/db/transaction-guard";
import { ApiError } from "@/lib/http/errors";
import { viemChain, type ChainConfig } from "./registry";

const cache = globalThis as unknown as { __publicClients?: Map<string, PublicClient> };

/**
 * Requests made in the same tick go as one JSON-RPC batch (RPC_BATCH=false turns it off, for a node that refuses
 * batches): an intent's build asks for nonce, code, balances and fees at once, and many intents build at once.
 */
const batch = () => process.env.RPC_BATCH !== "false";

const transport = (chain: ChainConfig): Transport => {
  const node = http(chain.rpcUrl, { timeout: 10_000, retryCount: 1, batch: batch() });
  return (options) => {
    const made = node(options);
    // Seen in the caller's async context (a batch is sent later, from a timer): see lib/db/transaction-guard.ts.
    return { ...made, request: ((args, more) => (noteRemoteCall(`chain ${chain.chainId} ${args.method}`), made.request(args, more))) as typeof made.request };
  };
};

/** The node a chain's reads go to: what per-chain caches are keyed by (a chain pointed at another node starts afresh). */
export const chainKey = (chain: ChainConfig) => `${chain.chainId}:${chain.rpcUrl}`;

export function publicClient(chain: ChainConfig): PublicClient {
  cache.__publicClients ??= new Map();
  const key = chainKey(chain);
  let client = cache.__publicClients.get(key);
  if (!client) {
    client = createPublicClient({ chain: viemChain(chain), transport: transport(chain) }) as PublicClient;
    cache.__publicClients.set(key, client);
  }
  return client;
}

export function walletClient(chain: ChainConfig, account: Account): WalletClient<Transport, Chain, Account> {
  return createWalletClient({ chain: viemChain(chain), transport: transport(chain), account });
}

/** True when the error means the chain's node could not be reached (as opposed to an answer we dislike). */
export function isUnreachable(err: unknown): boolean {
  if (!(err instanceof BaseError)) return false;
  return Boolean(err.walk((e) => e instanceof HttpRequestError || e instanceof TimeoutError));
}

export const chainUnavailable = (chain: ChainConfig) =>
  new ApiError(502, "api_error", `The node for chain ${chain.chainId} (${chain.name}) did not answer. Try again shortly.`);

/** Runs a chain call, answering 502 when the node is unreachable (the RPC URL, which may hold credentials, is never shown). */
export async function onChain<T>(chain: ChainConfig, call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (err) {
    if (isUnreachable(err)) throw chainUnavailable(chain);
    throw err;
  }
}
