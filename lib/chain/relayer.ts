import { EventEmitter } from "node:events";
import {
  BaseError,
  decodeErrorResult,
  encodeFunctionData,
  formatEther,
  getAbiItem,
  http,
  keccak256,
  parseEventLogs,
  RpcRequestError,
  toHex,
  type Address,
  type Hex,
  type Log,
  type PrivateKeyAccount,
  type TransactionReceipt,
} from "viem";
import {
  createBundlerClient,
  formatUserOperationRequest,
  UserOperationReceiptNotFoundError,
} from "viem/account-abstraction";
import { entryPointAbi } from "@/contracts/artifacts";
import { ApiError } from "@/lib/http/errors";
import { redact, redactUrl } from "@/lib/redact";
import { serviceAccount } from "@/lib/keys/service-keys";
import { isUnreachable, publicClient } from "./clients";
import { serviceDeployment } from "./contracts";
import { viemChain, type ChainConfig } from "./registry";
import {
  chainFees,
  describeRevert,
  revertDataOf,
  toEntryPointOp,
  UserOperationRejectedError,
  userOperationHash,
  type Fees,
  type UserOp,
} from "./userop";

// ---------------------------------------------------------------- configuration

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
  /** Give up waiting for a bundle after this (RELAY_MINE_TIMEOUT_MS, 10 min). */
  mineTimeoutMs: number;
  /** Receipt polling interval (RELAY_POLL_MS; dev chains 20 ms, others 1 s). */
  pollMs: number | null;
  /** How far back findUserOperationReceipt looks without `fromBlock` (RELAY_RECEIPT_LOOKBACK_BLOCKS, 10000). */
  receiptLookbackBlocks: bigint;
}

const envNumber = (name: string, fallback: number) => {
  const value = Number(process.env[name]);
  return process.env[name] && Number.isFinite(value) && value >= 0 ? value : fallback;
};

function configFromEnv(): RelayerConfig {
  return {
    executors: Math.max(1, Math.floor(envNumber("RELAY_EXECUTORS", 3))),
    executorOffset: Math.floor(envNumber("RELAY_EXECUTOR_OFFSET", 0)),
    batchWindowMs: envNumber("RELAY_BATCH_WINDOW_MS", 20),
    maxBundleSize: Math.max(1, Math.floor(envNumber("RELAY_MAX_BUNDLE", 50))),
    maxBundleGas: BigInt(Math.floor(envNumber("RELAY_MAX_BUNDLE_GAS", 10_000_000))),
    bumpAfterMs: process.env.RELAY_BUMP_AFTER_MS ? envNumber("RELAY_BUMP_AFTER_MS", 30_000) : null,
    mineTimeoutMs: envNumber("RELAY_MINE_TIMEOUT_MS", 600_000),
    pollMs: process.env.RELAY_POLL_MS ? envNumber("RELAY_POLL_MS", 1_000) : null,
    receiptLookbackBlocks: BigInt(Math.floor(envNumber("RELAY_RECEIPT_LOOKBACK_BLOCKS", 10_000))),
  };
}

interface Executor {
  account: PrivateKeyAccount;
  /** The next nonce to use, tracked locally; null means "ask the chain (pending)". */
  nextNonce: bigint | null;
  /** Serializes nonce assignment and sending. */
  lock: Promise<void>;
  /** Bundles sent and not yet mined. */
  inflight: number;
}

interface QueuedOp {
  op: UserOp;
  hash: Hex;
  resolve: (result: RelayResult) => void;
  reject: (err: unknown) => void;
}

interface ChainRelay {
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

const store = globalThis as unknown as { __relayer?: RelayerState };

function state(): RelayerState {
  store.__relayer ??= { config: configFromEnv(), chains: new Map(), events: new EventEmitter(), bundlers: new Map() };
  return store.__relayer;
}

/** Overrides configuration for this process (tests, boot); executors are re-derived on the next bundle. */
export function configureRelayer(options: Partial<RelayerConfig>): RelayerConfig {
  const s = state();
  s.config = { ...s.config, ...options };
  for (const relay of s.chains.values()) relay.executors = [];
  return s.config;
}

export const relayerConfig = (): RelayerConfig => state().config;

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

/**
 * What the relayer does, for logs and tests: "bundle:sent" {chainId, executor, nonce, transactionHash, fees, ops,
 * replaces?}, "bundle:mined" {chainId, executor, nonce, transactionHash, ops, gasUsed, ms}, "op:dropped"
 * {chainId, userOpHash, error}.
 */
export const relayerEvents = (): EventEmitter => state().events;

const pollMs = (chain: ChainConfig) => state().config.pollMs ?? (chain.dev ? 20 : 1_000);
const bumpAfterMs = (chain: ChainConfig) => state().config.bumpAfterMs ?? (chain.dev ? 3_000 : 30_000);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function relayFor(chain: ChainConfig): ChainRelay {
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
    }));
  }
  return relay;
}

/** The executor addresses the relayer uses on `chain`. */
export const executorAddresses = (chain: ChainConfig): Address[] => relayFor(chain).executors.map((e) => e.account.address);

// ---------------------------------------------------------------- errors

/** No executor can pay for the bundle's gas on a real chain: the operator must fund them. */
export class RelayerFundsError extends ApiError {
  constructor(chain: ChainConfig, balances: { address: Address; balance: bigint }[], needed: bigint) {
    const symbol = chain.nativeCurrency.symbol;
    super(
      503,
      "api_error",
      `The relayer's executors on chain ${chain.chainId} (${chain.name}) cannot pay for gas: a bundle needs up to ` +
        `${formatEther(needed)} ${symbol}, and they hold ` +
        balances.map((b) => `${b.address}: ${formatEther(b.balance)} ${symbol}`).join(", ") +
        `. The operator must send ${symbol} to them.`,
    );
  }
}

export class UserOperationReceiptTimeoutError extends ApiError {
  constructor(
    readonly userOpHash: Hex,
    timeoutMs: number,
  ) {
    super(504, "api_error", `User operation ${userOpHash} was not included within ${Math.round(timeoutMs / 1000)} s.`);
  }
}

// ---------------------------------------------------------------- receipts

export interface RelayedUserOperationReceipt {
  userOpHash: Hex;
  sender: Address;
  nonce: bigint;
  paymaster: Address;
  /** Whether the op's call succeeded (its gas is paid either way). */
  success: boolean;
  actualGasCost: bigint;
  actualGasUsed: bigint;
  transactionHash: Hex;
  blockNumber: bigint;
  /** The call's revert data (UserOperationRevertReason) when success is false. */
  revertData: Hex | null;
  /** revertData decoded, when success is false. */
  revertReason: string | null;
}

const userOperationEvent = getAbiItem({ abi: entryPointAbi, name: "UserOperationEvent" });

/** The UserOperationEvent receipts (with revert reasons) in a transaction's logs, by userOp hash. */
export function receiptsFromLogs(logs: Log[], transactionHash: Hex, blockNumber: bigint): Map<Hex, RelayedUserOperationReceipt> {
  const { entryPoint } = serviceDeployment();
  const events = parseEventLogs({
    abi: entryPointAbi,
    logs: logs.filter((log) => log.address.toLowerCase() === entryPoint.toLowerCase()),
    eventName: ["UserOperationEvent", "UserOperationRevertReason"],
  });
  const reasons = new Map<Hex, Hex>();
  for (const event of events) {
    if (event.eventName === "UserOperationRevertReason") reasons.set(event.args.userOpHash, event.args.revertReason);
  }
  const receipts = new Map<Hex, RelayedUserOperationReceipt>();
  for (const event of events) {
    if (event.eventName !== "UserOperationEvent") continue;
    const { userOpHash, sender, paymaster, nonce, success, actualGasCost, actualGasUsed } = event.args;
    const revertData = success ? null : (reasons.get(userOpHash) ?? "0x");
    receipts.set(userOpHash, {
      userOpHash,
      sender,
      nonce,
      paymaster,
      success,
      actualGasCost,
      actualGasUsed,
      transactionHash,
      blockNumber,
      revertData,
      revertReason: revertData === null ? null : describeRevert(revertData),
    });
  }
  return receipts;
}

function createBundler(chain: ChainConfig) {
  return createBundlerClient({
    chain: viemChain(chain),
    transport: http(chain.bundlerUrl!, { timeout: 15_000, retryCount: 1 }),
    pollingInterval: pollMs(chain),
  });
}

// The client's inferred type, not viem's BundlerClient: assigning one to the other made tsc compare the two
// generic client types member by member, about two minutes of a clean type check.
type Bundler = ReturnType<typeof createBundler>;

function bundlerFor(chain: ChainConfig): Bundler {
  const s = state();
  const key = `${chain.chainId}:${chain.bundlerUrl}`;
  let client = s.bundlers.get(key);
  if (!client) {
    client = createBundler(chain);
    s.bundlers.set(key, client);
  }
  return client;
}

const LOG_CHUNK_BLOCKS = 5_000n;

/**
 * The op's receipt if it is on chain, else null, without waiting: the EntryPoint's UserOperationEvent (searched from
 * `fromBlock`, default the last receiptLookbackBlocks blocks, newest first), or the bundler's eth_getUserOperationReceipt.
 */
export async function findUserOperationReceipt(
  chain: ChainConfig,
  userOpHash: Hex,
  options: { fromBlock?: bigint } = {},
): Promise<RelayedUserOperationReceipt | null> {
  if (chain.bundlerUrl) {
    try {
      const receipt = await bundlerFor(chain).getUserOperationReceipt({ hash: userOpHash });
      const fromLogs = receiptsFromLogs(receipt.receipt.logs as Log[], receipt.receipt.transactionHash, receipt.receipt.blockNumber);
      return fromLogs.get(userOpHash) ?? null;
    } catch (err) {
      if (err instanceof BaseError && err.walk((e) => e instanceof UserOperationReceiptNotFoundError)) return null;
      throw err;
    }
  }
  const client = publicClient(chain);
  const latest = await client.getBlockNumber({ cacheTime: 0 });
  const lookback = state().config.receiptLookbackBlocks;
  const from = options.fromBlock ?? (latest > lookback ? latest - lookback : 0n);
  for (let to = latest; to >= from; to -= LOG_CHUNK_BLOCKS) {
    const start = to - LOG_CHUNK_BLOCKS + 1n > from ? to - LOG_CHUNK_BLOCKS + 1n : from;
    const logs = await client.getLogs({
      address: serviceDeployment().entryPoint,
      event: userOperationEvent,
      args: { userOpHash },
      fromBlock: start,
      toBlock: to,
    });
    const log = logs.at(-1);
    if (log) {
      const receipt = await client.getTransactionReceipt({ hash: log.transactionHash });
      return receiptsFromLogs(receipt.logs, receipt.transactionHash, receipt.blockNumber).get(userOpHash) ?? null;
    }
    if (start === 0n) break;
  }
  return null;
}

/** Waits for the op's receipt (polling findUserOperationReceipt, only new blocks after the first look). */
export async function waitForUserOperationReceipt(
  chain: ChainConfig,
  userOpHash: Hex,
  options: { fromBlock?: bigint; timeoutMs?: number } = {},
): Promise<RelayedUserOperationReceipt> {
  const timeoutMs = options.timeoutMs ?? 120_000;
  const deadline = Date.now() + timeoutMs;
  let fromBlock = options.fromBlock;
  for (;;) {
    const checkedUpTo = chain.bundlerUrl ? null : await publicClient(chain).getBlockNumber({ cacheTime: 0 });
    const receipt = await findUserOperationReceipt(chain, userOpHash, { fromBlock });
    if (receipt) return receipt;
    // A small overlap keeps a log from a block mined during the search from being skipped.
    if (checkedUpTo !== null) fromBlock = checkedUpTo > 2n ? checkedUpTo - 2n : 0n;
    if (Date.now() >= deadline) throw new UserOperationReceiptTimeoutError(userOpHash, timeoutMs);
    await sleep(Math.min(pollMs(chain), Math.max(0, deadline - Date.now())));
  }
}

// ---------------------------------------------------------------- sending

const messageOf = (err: unknown) => (err instanceof Error ? err.message : String(err));
const nonceTooLow = (err: unknown) => /nonce too low|nonce.*(lower|already used|has already been used)|invalid nonce|OldNonce/i.test(messageOf(err));
const alreadyKnown = (err: unknown) => /already known|already imported|known transaction|AlreadyKnown/i.test(messageOf(err));
const underpriced = (err: unknown) => /underpriced|fee too low|replacement/i.test(messageOf(err));
const insufficientFunds = (err: unknown) => /insufficient funds|exceeds balance/i.test(messageOf(err));

interface SentTransaction {
  hash: Hex;
  nonce: bigint;
  fees: Fees;
  serialized: Hex;
}

interface BundleCall {
  data: Hex;
  gas: bigint;
}

/** Serializes work on one executor's nonce. */
async function withLock<T>(executor: Executor, work: () => Promise<T>): Promise<T> {
  const previous = executor.lock;
  let release!: () => void;
  executor.lock = new Promise<void>((resolve) => (release = resolve));
  await previous;
  try {
    return await work();
  } finally {
    release();
  }
}

async function signAndSend(chain: ChainConfig, executor: Executor, call: BundleCall, nonce: bigint, fees: Fees): Promise<SentTransaction> {
  const { entryPoint } = serviceDeployment();
  const serialized = await executor.account.signTransaction({
    type: "eip1559",
    chainId: chain.chainId,
    to: entryPoint,
    data: call.data,
    gas: call.gas,
    nonce: Number(nonce),
    maxFeePerGas: fees.maxFeePerGas,
    maxPriorityFeePerGas: fees.maxPriorityFeePerGas,
  });
  const hash = keccak256(serialized);
  try {
    await publicClient(chain).sendRawTransaction({ serializedTransaction: serialized });
  } catch (err) {
    // The node has it already (a retried request): sent. The node did not answer: it may have it; the wait loop
    // rebroadcasts, so treat it as sent.
    if (!alreadyKnown(err) && !isUnreachable(err)) throw err;
  }
  return { hash, nonce, fees, serialized };
}

/** Sends the bundle from `executor` with its next nonce, resyncing from the chain on "nonce too low" and the like. */
async function sendBundle(chain: ChainConfig, executor: Executor, call: BundleCall, fees: Fees): Promise<SentTransaction> {
  return withLock(executor, async () => {
    for (let attempt = 0; ; attempt++) {
      if (executor.nextNonce === null) {
        executor.nextNonce = BigInt(
          await publicClient(chain).getTransactionCount({ address: executor.account.address, blockTag: "pending" }),
        );
      }
      const nonce = executor.nextNonce;
      try {
        const sent = await signAndSend(chain, executor, call, nonce, fees);
        executor.nextNonce = nonce + 1n;
        return sent;
      } catch (err) {
        // Someone else (another instance, a restart's lost state, an operator) used this nonce: ask the chain again.
        executor.nextNonce = null;
        if (attempt < 4 && (nonceTooLow(err) || underpriced(err) || alreadyKnown(err))) continue;
        if (insufficientFunds(err) && chain.dev && attempt < 4) {
          await topUp(chain, executor.account.address);
          continue;
        }
        throw err;
      }
    }
  });
}

const bump = (fees: Fees, market: Fees): Fees => {
  const up = (value: bigint) => (value * 1125n) / 1000n + 1n;
  const maxPriorityFeePerGas = [up(fees.maxPriorityFeePerGas), market.maxPriorityFeePerGas].reduce((a, b) => (a > b ? a : b));
  let maxFeePerGas = [up(fees.maxFeePerGas), market.maxFeePerGas].reduce((a, b) => (a > b ? a : b));
  if (maxFeePerGas < maxPriorityFeePerGas) maxFeePerGas = maxPriorityFeePerGas;
  return { maxFeePerGas, maxPriorityFeePerGas };
};

class NonceTakenError extends Error {}

async function receiptOf(chain: ChainConfig, hash: Hex): Promise<TransactionReceipt | null> {
  try {
    return await publicClient(chain).getTransactionReceipt({ hash });
  } catch {
    return null;
  }
}

/**
 * Waits for any of the transactions sent with this nonce to be mined. Every bumpAfterMs without one, it resubmits
 * the same nonce with fees raised by 12.5% (at least to the market's): a replacement the node must accept.
 */
async function waitMined(
  chain: ChainConfig,
  executor: Executor,
  call: BundleCall,
  first: SentTransaction,
  ops: number,
): Promise<{ receipt: TransactionReceipt; sent: SentTransaction }> {
  const events = relayerEvents();
  const started = Date.now();
  const sent = [first];
  let fees = first.fees;
  let rebroadcast = false;
  let nextBump = Date.now() + bumpAfterMs(chain);
  for (;;) {
    for (const tx of sent) {
      const receipt = await receiptOf(chain, tx.hash);
      if (receipt) return { receipt, sent: tx };
    }
    if (Date.now() - started > state().config.mineTimeoutMs) {
      throw new Error(`Bundle ${first.hash} (nonce ${first.nonce}) was not mined within ${state().config.mineTimeoutMs} ms`);
    }
    if (Date.now() >= nextBump) {
      fees = bump(fees, await chainFees(chain));
      try {
        const replacement = await signAndSend(chain, executor, call, first.nonce, fees);
        sent.push(replacement);
        events.emit("bundle:sent", {
          chainId: chain.chainId,
          executor: executor.account.address,
          nonce: first.nonce,
          transactionHash: replacement.hash,
          fees,
          ops,
          replaces: sent[sent.length - 2]!.hash,
        });
      } catch (err) {
        if (nonceTooLow(err)) {
          // One of ours was mined meanwhile, or someone else's took the nonce.
          for (const tx of sent) {
            const receipt = await receiptOf(chain, tx.hash);
            if (receipt) return { receipt, sent: tx };
          }
          throw new NonceTakenError(`Nonce ${first.nonce} of executor ${executor.account.address} was used by another transaction`);
        }
        // Underpriced: the next round bumps again from these fees. Anything else (say the executor cannot afford the
        // higher fee): what was sent stands, keep waiting for it.
        if (!underpriced(err)) {
          if (chain.dev && insufficientFunds(err)) await topUp(chain, executor.account.address);
          else console.warn(JSON.stringify({ level: "warn", chainId: chain.chainId, message: `fee bump of ${first.hash} failed: ${redact(messageOf(err).split("\n")[0]!)}` }));
        }
      }
      nextBump = Date.now() + bumpAfterMs(chain);
    } else if (!rebroadcast && Date.now() - started > bumpAfterMs(chain) / 2) {
      // Rebroadcast once, in case the node never got it (an unanswered send).
      rebroadcast = true;
      await publicClient(chain)
        .sendRawTransaction({ serializedTransaction: first.serialized })
        .catch(() => undefined);
    }
    await sleep(pollMs(chain));
  }
}

// ---------------------------------------------------------------- executors

const DEV_EXECUTOR_BALANCE = 10_000n * 10n ** 18n;

async function topUp(chain: ChainConfig, address: Address) {
  await publicClient(chain).request({
    method: "anvil_setBalance" as never,
    params: [address, toHex(DEV_EXECUTOR_BALANCE)] as never,
  });
}

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

/** The least busy executor that can pay `needed` (dev chains top theirs up); the others are tried in turn. */
async function pickExecutor(chain: ChainConfig, needed: bigint): Promise<Executor> {
  const relay = relayFor(chain);
  const n = relay.executors.length;
  // Fewest bundles in flight first; ties take turns.
  const order = relay.executors
    .map((executor, i) => ({ executor, rank: (i - relay.turn + n) % n }))
    .sort((a, b) => a.executor.inflight - b.executor.inflight || a.rank - b.rank)
    .map(({ executor }) => executor);
  relay.turn = (relay.turn + 1) % n;
  const balances: { address: Address; balance: bigint }[] = [];
  for (const executor of order) {
    // Claim before any await, so concurrent bundles spread over the executors.
    executor.inflight++;
    try {
      const address = executor.account.address;
      const balance = await publicClient(chain).getBalance({ address });
      if (chain.dev) {
        if (balance < needed * LOW_BALANCE_BUNDLES) await topUp(chain, address);
        return executor;
      }
      if (balance >= needed) {
        if (balance < needed * LOW_BALANCE_BUNDLES) warnLow(chain, address, balance, needed);
        return executor;
      }
      balances.push({ address, balance });
    } catch (err) {
      executor.inflight--;
      throw err;
    }
    executor.inflight--;
  }
  console.warn(JSON.stringify({ level: "warn", chainId: chain.chainId, message: "relayer executors cannot pay for a bundle", needed: needed.toString(), balances: balances.map((b) => ({ address: b.address, balance: b.balance.toString() })) }));
  throw new RelayerFundsError(chain, balances, needed);
}

/** Below this many bundles' worth of gas an executor counts as low: dev chains top it up, others log a warning. */
const LOW_BALANCE_BUNDLES = 20n;
const lowWarnedAt = new Map<string, number>();

function warnLow(chain: ChainConfig, address: Address, balance: bigint, needed: bigint) {
  const key = `${chain.chainId}:${address}`;
  if (Date.now() - (lowWarnedAt.get(key) ?? 0) < 600_000) return;
  lowWarnedAt.set(key, Date.now());
  console.warn(
    JSON.stringify({
      level: "warn",
      chainId: chain.chainId,
      message: `relayer executor ${address} is low on funds: ${formatEther(balance)} ${chain.nativeCurrency.symbol}, about ${balance / needed} bundles; fund it`,
    }),
  );
}

// ---------------------------------------------------------------- bundles

export interface RelayResult {
  userOpHash: Hex;
  transactionHash: Hex;
  /** The executor that sent the bundle; null through a bundler. */
  executor: Address | null;
  receipt: RelayedUserOperationReceipt;
  /** Ops in the bundle transaction (1 through a bundler). */
  bundleSize: number;
}

export interface BundleResult {
  /** The bundle transaction (for ops that had already landed: the transaction that included the first of them). */
  transactionHash: Hex;
  executor: Address | null;
  blockNumber: bigint;
  /** The bundle transaction's gas. */
  gasUsed: bigint;
  /** One per included op, in bundle order. */
  included: RelayResult[];
  /** Ops left out, each with why (UserOperationRejectedError for a validation failure). */
  dropped: { userOpHash: Hex; error: Error }[];
}

interface Entry {
  op: UserOp;
  hash: Hex;
}

const deploys = (entry: Entry) => (entry.op.initCode ?? "0x") !== "0x";

/**
 * Each sender's ops, in the places its ops had, reordered: the deploying one (initCode) first, as the others only
 * validate once it ran, then by nonce (same key: sequence order).
 */
function orderForBundle(entries: Entry[]): Entry[] {
  const bySender = new Map<string, Entry[]>();
  for (const entry of entries) {
    const sender = entry.op.sender.toLowerCase();
    bySender.set(sender, [...(bySender.get(sender) ?? []), entry]);
  }
  for (const ops of bySender.values()) {
    ops.sort((a, b) => {
      if (deploys(a) !== deploys(b)) return deploys(a) ? -1 : 1;
      return a.op.nonce < b.op.nonce ? -1 : a.op.nonce > b.op.nonce ? 1 : 0;
    });
  }
  const taken = new Map<string, number>();
  return entries.map((entry) => {
    const sender = entry.op.sender.toLowerCase();
    const i = taken.get(sender) ?? 0;
    taken.set(sender, i + 1);
    return bySender.get(sender)![i]!;
  });
}

const handleOpsData = (entries: Entry[], beneficiary: Address) =>
  encodeFunctionData({
    abi: entryPointAbi,
    functionName: "handleOps",
    args: [entries.map((e) => toEntryPointOp(e.op)), beneficiary],
  });

/** The EntryPoint's FailedOp(index, reason) in a reverted call's error, if that is what it is. */
function failedOpOf(err: unknown): { index: number; reason: string } | null {
  const data = revertDataOf(err);
  if (!data) return null;
  try {
    const decoded = decodeErrorResult({ abi: entryPointAbi, data });
    if (decoded.errorName === "FailedOp") return { index: Number(decoded.args[0]), reason: decoded.args[1] };
  } catch {
    // not a FailedOp
  }
  return null;
}

/**
 * Static simulation of handleOps (eth_estimateGas, which also gives the gas): an op failing validation makes the
 * EntryPoint revert with FailedOp(index, reason); it is dropped with that reason and the rest simulated again.
 * An op already on chain is reported with its receipt instead.
 */
async function screen(chain: ChainConfig, entries: Entry[], beneficiary: Address) {
  const kept = [...entries];
  const dropped: { userOpHash: Hex; error: Error }[] = [];
  const landed: { entry: Entry; receipt: RelayedUserOperationReceipt }[] = [];
  const { entryPoint } = serviceDeployment();
  while (kept.length > 0) {
    try {
      const estimate = await publicClient(chain).estimateGas({
        account: beneficiary,
        to: entryPoint,
        data: handleOpsData(kept, beneficiary),
      });
      return { kept, dropped, landed, gas: (estimate * 12n) / 10n + 20_000n };
    } catch (err) {
      const data = revertDataOf(err);
      const failed = failedOpOf(err);
      if (!failed || failed.index >= kept.length) {
        if (data !== undefined && kept.length === 1) {
          dropped.push({ userOpHash: kept[0]!.hash, error: new UserOperationRejectedError(`handleOps reverted: ${describeRevert(data)}`) });
          kept.length = 0;
          break;
        }
        throw err;
      }
      const [entry] = kept.splice(failed.index, 1) as [Entry];
      // An op already on chain fails as "nonce used" (AA25), or "already constructed" (AA10) with its initCode.
      if (/^AA(10|25)/.test(failed.reason)) {
        const receipt = await findUserOperationReceipt(chain, entry.hash);
        if (receipt) {
          landed.push({ entry, receipt });
          continue;
        }
      }
      const error = new UserOperationRejectedError(failed.reason);
      dropped.push({ userOpHash: entry.hash, error });
      relayerEvents().emit("op:dropped", { chainId: chain.chainId, userOpHash: entry.hash, error });
    }
  }
  return { kept, dropped, landed, gas: 0n };
}

/**
 * Sends the ops in ONE EntryPoint.handleOps transaction from one of our executors (beneficiary: the executor) and
 * waits for it to be mined, bumping its fees while it is stuck. Ops that fail simulation are left out (`dropped`) so
 * they never sink the others; ops already on chain come back with their existing receipt and are not resent. With
 * `chain.bundlerUrl`, each op goes to the bundler (eth_sendUserOperation) instead.
 */
export async function submitUserOperations(chain: ChainConfig, ops: UserOp[]): Promise<BundleResult> {
  if (ops.length === 0) throw new Error("submitUserOperations: no operations");
  const entries = ops.map((op) => ({ op, hash: userOperationHash(chain, op) }));
  if (chain.bundlerUrl) return submitThroughBundler(chain, entries);
  const result = await relayBundle(chain, orderForBundle(entries), 0);
  if (!("included" in result)) throw result.error;
  return result;
}

type Dropped = { userOpHash: Hex; error: Error }[];
/** Every op was left out: the first one's error, and all of them. */
type NothingSent = { error: Error; dropped: Dropped };
type Relayed = BundleResult | NothingSent;

/** Several outcomes as one; the first bundle that sent something names the transaction. */
function combine(parts: Relayed[], alreadyLanded: RelayResult[], dropped: Dropped): Relayed {
  const included = [...alreadyLanded, ...parts.flatMap((p) => ("included" in p ? p.included : []))];
  const allDropped = [...dropped, ...parts.flatMap((p) => p.dropped)];
  const sent = parts.find((p): p is BundleResult => "included" in p);
  if (sent) return { ...sent, included, dropped: allDropped };
  const first = included[0];
  if (first) {
    return { transactionHash: first.transactionHash, executor: null, blockNumber: first.receipt.blockNumber, gasUsed: 0n, included, dropped: allDropped };
  }
  return { error: allDropped[0]!.error, dropped: allDropped };
}

/** Screens, sends and awaits one bundle; a bundle that cannot land as sent is screened and sent again (3 times). */
async function relayBundle(chain: ChainConfig, entries: Entry[], attempt: number): Promise<Relayed> {
  const fees = await chainFees(chain);
  // The beneficiary only matters for the simulation's gas; any of our executors will do.
  const probe = relayFor(chain).executors[0]!.account.address;
  const screened = await screen(chain, entries, probe);
  const alreadyLanded = screened.landed.map(({ entry, receipt }) => ({
    userOpHash: entry.hash,
    transactionHash: receipt.transactionHash,
    executor: null,
    receipt,
    bundleSize: 0,
  }));
  if (screened.kept.length === 0) return combine([], alreadyLanded, screened.dropped);
  if (screened.gas > state().config.maxBundleGas && screened.kept.length > 1) {
    const half = Math.ceil(screened.kept.length / 2);
    const parts = await Promise.all([
      relayBundle(chain, screened.kept.slice(0, half), attempt),
      relayBundle(chain, screened.kept.slice(half), attempt),
    ]);
    return combine(parts, alreadyLanded, screened.dropped);
  }

  const executor = await pickExecutor(chain, screened.gas * fees.maxFeePerGas);
  const events = relayerEvents();
  try {
    const call = { data: handleOpsData(screened.kept, executor.account.address), gas: screened.gas };
    const started = Date.now();
    const first = await sendBundle(chain, executor, call, fees);
    events.emit("bundle:sent", {
      chainId: chain.chainId,
      executor: executor.account.address,
      nonce: first.nonce,
      transactionHash: first.hash,
      fees,
      ops: screened.kept.length,
    });
    let mined;
    try {
      mined = await waitMined(chain, executor, call, first, screened.kept.length);
    } catch (err) {
      if (err instanceof NonceTakenError && attempt < 3) {
        executor.nextNonce = null;
        return combine([await relayBundle(chain, screened.kept, attempt + 1)], alreadyLanded, screened.dropped);
      }
      throw err;
    }
    const { receipt } = mined;
    events.emit("bundle:mined", {
      chainId: chain.chainId,
      executor: executor.account.address,
      nonce: mined.sent.nonce,
      transactionHash: receipt.transactionHash,
      ops: screened.kept.length,
      gasUsed: receipt.gasUsed,
      ms: Date.now() - started,
    });
    // handleOps reverted on chain (state changed since simulation): simulate again and resend what still passes.
    if (receipt.status !== "success") {
      if (attempt < 3) return combine([await relayBundle(chain, screened.kept, attempt + 1)], alreadyLanded, screened.dropped);
      throw new Error(`Bundle ${receipt.transactionHash} reverted on chain`);
    }
    const receipts = receiptsFromLogs(receipt.logs, receipt.transactionHash, receipt.blockNumber);
    const included: RelayResult[] = [...alreadyLanded];
    const dropped = [...screened.dropped];
    for (const entry of screened.kept) {
      const opReceipt = receipts.get(entry.hash);
      if (opReceipt) {
        included.push({
          userOpHash: entry.hash,
          transactionHash: receipt.transactionHash,
          executor: executor.account.address,
          receipt: opReceipt,
          bundleSize: screened.kept.length,
        });
      } else {
        dropped.push({ userOpHash: entry.hash, error: new Error(`Operation ${entry.hash} is missing from bundle ${receipt.transactionHash}`) });
      }
    }
    return {
      transactionHash: receipt.transactionHash,
      executor: executor.account.address,
      blockNumber: receipt.blockNumber,
      gasUsed: receipt.gasUsed,
      included,
      dropped,
    };
  } finally {
    executor.inflight--;
  }
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

/** ERC-7769's codes for an op the bundler refuses (-32500…-32508 validation, signature, stake…; -32521 reverted), and -32602 invalid fields. */
const refusalCode = (code: number) => code === -32602 || code === -32521 || (code <= -32500 && code >= -32508);

/** Why handleOps would refuse the op: the EntryPoint's "AAxx …" reason, or null if it would take it (or the node did not say). */
async function handleOpsRefusal(chain: ChainConfig, entry: Entry): Promise<string | null> {
  const probe = relayFor(chain).executors[0]!.account.address;
  try {
    await publicClient(chain).estimateGas({ account: probe, to: serviceDeployment().entryPoint, data: handleOpsData([entry], probe) });
    return null;
  } catch (err) {
    return failedOpOf(err)?.reason ?? null;
  }
}

type BundlerAnswer = { sent: true } | { landed: RelayedUserOperationReceipt } | { error: unknown };

/**
 * What a bundler's error to eth_sendUserOperation means. "Already known": it holds the op (a resubmission after a
 * restart), so it was sent. An AA code: refused with the EntryPoint's reason, unless it is AA10/AA25 for an op that
 * already landed, which gets its receipt (as self-bundling does). A refusal without an AA code (alto reports a bad v0.6
 * signature as -32507 "Invalid UserOperation signature or paymaster signature": AA24 or AA34) gets the EntryPoint's
 * reason from a handleOps simulation. Anything else (unreachable bundler, a refusal the EntryPoint would not make)
 * passes through, to be retried.
 */
async function bundlerAnswer(chain: ChainConfig, entry: Entry, err: unknown): Promise<BundlerAnswer> {
  const rpc = err instanceof BaseError ? err.walk((e) => e instanceof RpcRequestError) : null;
  if (!(rpc instanceof RpcRequestError)) return { error: err };
  // The bundler's own message: the error's full message also quotes the request, whose hex must not be searched.
  const message = rpc.details;
  let reason = /\b(AA\d\d\b.*)/.exec(message)?.[1]?.trim();
  if (!reason && /already known/i.test(message)) return { sent: true };
  if (!reason && refusalCode(rpc.code)) reason = (await handleOpsRefusal(chain, entry)) ?? undefined;
  if (!reason) return { error: err };
  if (/^AA(10|25)\b/.test(reason)) {
    const receipt = await findUserOperationReceipt(chain, entry.hash);
    if (receipt) return { landed: receipt };
  }
  return { error: new UserOperationRejectedError(reason) };
}

async function relayThroughBundler(chain: ChainConfig, entry: Entry): Promise<RelayResult> {
  const { entryPoint } = serviceDeployment();
  const answer = await bundlerFor(chain)
    .request({ method: "eth_sendUserOperation", params: [formatUserOperationRequest(toEntryPointOp(entry.op)), entryPoint] })
    .then(
      (hash): BundlerAnswer => {
        // A bundler hashing for another chain or EntryPoint would have us wait for a receipt that never comes.
        if (hash.toLowerCase() !== entry.hash.toLowerCase()) {
          throw new Error(`The bundler at ${redactUrl(chain.bundlerUrl!)} returned hash ${hash} for user operation ${entry.hash}: is it for chain ${chain.chainId} and EntryPoint ${entryPoint}?`);
        }
        return { sent: true };
      },
      (err: unknown) => bundlerAnswer(chain, entry, err),
    );
  if ("error" in answer) throw answer.error;
  const receipt = "landed" in answer ? answer.landed : await waitForUserOperationReceipt(chain, entry.hash, { timeoutMs: state().config.mineTimeoutMs });
  return { userOpHash: entry.hash, transactionHash: receipt.transactionHash, executor: null, receipt, bundleSize: 1 };
}

// ---------------------------------------------------------------- queue

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
  promise.then(
    () => relay.pending.delete(hash),
    () => relay.pending.delete(hash),
  );
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
