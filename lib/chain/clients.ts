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
import { badGateway } from "@/lib/errors";
import { viemChain, type ChainConfig } from "./registry";
import { rpcFetch } from "./rpc-fetch";
import { processSingleton } from "@/lib/singleton";

const cache = processSingleton("publicClients", () => new Map<string, PublicClient>());

/**
 * Requests made in the same tick go as one JSON-RPC batch (RPC_BATCH=false turns it off, for a node that refuses
 * batches): an intent's build asks for nonce, code, balances and fees at once, and many intents build at once.
 */
const batch = () => process.env.RPC_BATCH !== "false";

const transport = (chain: ChainConfig): Transport => {
  // rpcFetch: node:http on kept-alive sockets instead of the global fetch (about 0.5 ms less CPU per request).
  const node = http(chain.rpcUrl, { timeout: 10_000, retryCount: 1, batch: batch(), fetchFn: rpcFetch });
  return (options) => {
    const made = node(options);
    // Seen in the caller's async context (a batch is sent later, from a timer): see lib/db/transaction-guard.ts.
    return { ...made, request: ((args, more) => (noteRemoteCall(`chain ${chain.chainId} ${args.method}`), made.request(args, more))) as typeof made.request };
  };
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

export function walletClient(chain: ChainConfig, account: Account): WalletClient<Transport, Chain, Account> {
  return createWalletClient({ chain: viemChain(chain), transport: transport(chain), account });
}

/** True when the error means the chain's node could not be reached (as opposed to an answer we dislike). */
export function isUnreachable(err: unknown): boolean {
  if (!(err instanceof BaseError)) return false;
  return Boolean(err.walk((e) => e instanceof HttpRequestError || e instanceof TimeoutError));
}

export const chainUnavailable = (chain: ChainConfig) =>
  badGateway(`The node for chain ${chain.chainId} (${chain.name}) did not answer. Try again shortly.`);

/** Runs a chain call, answering 502 when the node is unreachable (the RPC URL, which may hold credentials, is never shown). */
export async function onChain<T>(chain: ChainConfig, call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (err) {
    if (isUnreachable(err)) throw chainUnavailable(chain);
    throw err;
  }
}
