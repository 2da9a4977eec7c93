// Sending a bundle transaction from an executor: its nonce under a lock (resynced from the chain when taken), and
// waiting for it to be mined, with fee bumps while it is stuck. An executor's nonces follow the chain: a nonce the node
// no longer holds a transaction of ours for (a reorg took the block, the pool was dropped) is a gap below the bundles
// waiting above it; it is filled (a zero-value transaction) or taken by the next bundle, so nothing waits on it.
import { keccak256, type Address, type Hex, type SignedAuthorization, type TransactionReceipt } from "viem";
import { redact } from "@/lib/redact";
import { isUnreachable, nodeClient, publicClient } from "@/lib/chain/clients";
import type { ChainConfig } from "@/lib/chain/registry";
import { chainFees, type Fees } from "@/lib/chain/userop";
import { bumpAfterMs, pollMs, relayerEvents, sleep, state, type Executor } from "./config";
import { topUp } from "./executors";
import { log } from "@/lib/log";

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
  /** The EntryPoint the bundle is for. */
  to: Address;
  data: Hex;
  gas: bigint;
  /** EIP-7702 authorizations of the bundle's ops: sent as a type-4 transaction when there are any. */
  authorizationList?: SignedAuthorization[];
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
  const common = {
    chainId: chain.chainId,
    to: call.to,
    data: call.data,
    gas: call.gas,
    nonce: Number(nonce),
    maxFeePerGas: fees.maxFeePerGas,
    maxPriorityFeePerGas: fees.maxPriorityFeePerGas,
  };
  const serialized = call.authorizationList?.length
    ? await executor.account.signTransaction({ ...common, type: "eip7702", authorizationList: call.authorizationList })
    : await executor.account.signTransaction({ ...common, type: "eip1559" });
  const hash = keccak256(serialized);
  executor.sent.set(nonce, [...(executor.sent.get(nonce) ?? []), hash]);
  try {
    await publicClient(chain).sendRawTransaction({ serializedTransaction: serialized });
  } catch (err) {
    // The node has it already (a retried request): sent. The node did not answer: it may have it; the wait loop
    // rebroadcasts, so treat it as sent.
    if (!alreadyKnown(err) && !isUnreachable(err)) throw err;
  }
  return { hash, nonce, fees, serialized };
}

/** Whether the node holds (pending or mined) any of the transactions we sent at `nonce`. */
async function nodeHolds(chain: ChainConfig, executor: Executor, nonce: bigint): Promise<boolean> {
  for (const hash of executor.sent.get(nonce) ?? []) {
    const found = await nodeClient(chain)
      .getTransaction({ hash })
      .then(
        () => true,
        () => false,
      );
    if (found) return true;
  }
  return false;
}

/**
 * A zero-value transaction to itself at `nonce`: fills a gap whose bundle the node no longer has, or (fees `above` a
 * stuck one's) replaces a bundle given up on, so nothing of ours waits behind it.
 */
async function fill(chain: ChainConfig, executor: Executor, nonce: bigint, above?: Fees): Promise<void> {
  const market = await chainFees(chain);
  const fees = above ? bump(above, market) : market;
  const serialized = await executor.account.signTransaction({
    chainId: chain.chainId,
    type: "eip1559",
    to: executor.account.address,
    value: 0n,
    gas: 21_000n,
    nonce: Number(nonce),
    maxFeePerGas: fees.maxFeePerGas,
    maxPriorityFeePerGas: fees.maxPriorityFeePerGas,
  });
  executor.sent.set(nonce, [...(executor.sent.get(nonce) ?? []), keccak256(serialized)]);
  try {
    await publicClient(chain).sendRawTransaction({ serializedTransaction: serialized });
  } catch (err) {
    // Mined or held meanwhile (ours or another's): the gap is gone either way.
    if (!alreadyKnown(err) && !nonceTooLow(err) && !underpriced(err)) throw err;
  }
  relayerEvents().emit("nonce:filled", { chainId: chain.chainId, executor: executor.account.address, nonce });
  log.warn({ chainId: chain.chainId, executor: executor.account.address, nonce: nonce.toString() }, "relayer: the node had lost this executor's transaction at a nonce below others waiting: filled");
}

/**
 * Brings the executor's nonces in line with the chain (call under its lock): below the next nonce it would use, every
 * nonce from the chain's mined count up must hold a transaction of ours in the node. Unheld nonces below the highest
 * held one are gaps, each filled; unheld ones above it are taken again by the next bundles (their waiters find their
 * nonce used by another transaction and send their ops again). Returns the gaps filled.
 */
async function heal(chain: ChainConfig, executor: Executor): Promise<number> {
  if (executor.nextNonce === null) return 0;
  // One node for these reads: a lagging node's count beside another's pool would look like a gap.
  const mined = BigInt(await nodeClient(chain).getTransactionCount({ address: executor.account.address, blockTag: "latest" }));
  for (const nonce of executor.sent.keys()) if (nonce < mined - 64n) executor.sent.delete(nonce);
  if (mined >= executor.nextNonce) {
    // Mined up to (or past: another sender) what we have sent.
    if (mined > executor.nextNonce) executor.nextNonce = mined;
    return 0;
  }
  const held: boolean[] = [];
  for (let n = mined; n < executor.nextNonce; n++) held.push(await nodeHolds(chain, executor, n));
  const top = held.lastIndexOf(true);
  let filled = 0;
  for (let i = 0; i < top; i++) {
    if (held[i]) continue;
    await fill(chain, executor, mined + BigInt(i));
    filled++;
  }
  // Nothing held above `top`: those nonces are free again.
  executor.nextNonce = mined + BigInt(top + 1);
  return filled;
}

/**
 * Sends the bundle from `executor` with its next nonce, resyncing from the chain on "nonce too low" and the like, and
 * first following the chain's nonce when the node holds less than this process sent (heal).
 */
export async function sendBundle(chain: ChainConfig, executor: Executor, call: BundleCall, fees: Fees): Promise<SentTransaction> {
  return withLock(executor, async () => {
    if (executor.nextNonce !== null) {
      const pending = BigInt(await nodeClient(chain).getTransactionCount({ address: executor.account.address, blockTag: "pending" }));
      if (pending !== executor.nextNonce) await heal(chain, executor);
    }
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

export class NonceTakenError extends Error {}

async function receiptOf(chain: ChainConfig, hash: Hex): Promise<TransactionReceipt | null> {
  try {
    return await publicClient(chain).getTransactionReceipt({ hash });
  } catch {
    return null;
  }
}

/**
 * Blocks mined without our bundle before the executor's nonces are checked against the node: every new block. A lost
 * transaction below ours (a reorg took it, the node dropped it) holds every later bundle of the executor, and fresh
 * intents queue behind them; the check is a few reads when nothing is lost (the chain drill measures the wait).
 */
const STALL_BLOCKS = 1n;
/** How often the head is looked at for that (dev chains poll receipts far more often). */
const STALL_CHECK_MS = 1_000;

/** A bundle not mined within RELAY_MINE_TIMEOUT_MS: its ops go to another bundle (another executor). */
export class BundleStuckError extends NonceTakenError {}

/**
 * Waits for any of the transactions sent with this nonce to be mined. Every bumpAfterMs without one, it resubmits
 * the same nonce with fees raised by 12.5% (at least to the market's): a replacement the node must accept. Every new
 * block without one it checks the node: our nonce used by another transaction (NonceTakenError: the ops go again),
 * ours lost (sent again), a lost nonce below ours (filled: heal). After RELAY_MINE_TIMEOUT_MS, BundleStuckError.
 */
export async function waitMined(
  chain: ChainConfig,
  executor: Executor,
  call: BundleCall,
  first: SentTransaction,
  ops: number,
): Promise<{ receipt: TransactionReceipt; sent: SentTransaction }> {
  const events = relayerEvents();
  const client = publicClient(chain);
  const started = Date.now();
  const sent = [first];
  let fees = first.fees;
  let rebroadcast = false;
  let nextBump = Date.now() + bumpAfterMs(chain);
  let checkedAt = await client.getBlockNumber({ cacheTime: 0 }).catch(() => null);
  let nextCheck = Date.now() + STALL_CHECK_MS;
  const minedOrTaken = async () => {
    for (const tx of sent) {
      const receipt = await receiptOf(chain, tx.hash);
      if (receipt) return { receipt, sent: tx };
    }
    throw new NonceTakenError(`Nonce ${first.nonce} of executor ${executor.account.address} was used by another transaction`);
  };
  for (;;) {
    for (const tx of sent) {
      const receipt = await receiptOf(chain, tx.hash);
      if (receipt) return { receipt, sent: tx };
    }
    if (Date.now() - started > state().config.mineTimeoutMs) {
      // Its nonce is taken by a cheap transaction of ours, so the executor's later bundles are not stuck behind it.
      await withLock(executor, () => fill(chain, executor, first.nonce, fees)).catch(() => undefined);
      throw new BundleStuckError(`Bundle ${first.hash} (nonce ${first.nonce}) was not mined within ${state().config.mineTimeoutMs} ms`);
    }
    if (Date.now() >= nextCheck) {
      nextCheck = Date.now() + STALL_CHECK_MS;
      const head = await client.getBlockNumber({ cacheTime: 0 }).catch(() => null);
      if (head !== null && checkedAt !== null && head - checkedAt >= STALL_BLOCKS) {
        checkedAt = head;
        const mined = BigInt(await nodeClient(chain).getTransactionCount({ address: executor.account.address, blockTag: "latest" }));
        if (mined > first.nonce) return minedOrTaken();
        // Ours first (so healing sees it held), then the nonces below it.
        const latest = sent[sent.length - 1]!;
        if (!(await nodeHolds(chain, executor, first.nonce))) {
          try {
            await client.sendRawTransaction({ serializedTransaction: latest.serialized });
            log.warn({ chainId: chain.chainId, executor: executor.account.address, nonce: first.nonce.toString(), transaction: latest.hash }, "relayer: the node had lost a bundle; sent again");
          } catch (err) {
            if (nonceTooLow(err)) return minedOrTaken();
            // Another transaction holds our nonce in the node now: it will be mined, not ours.
            if (underpriced(err)) throw new NonceTakenError(`Nonce ${first.nonce} of executor ${executor.account.address} is held by another transaction`);
          }
        }
        await withLock(executor, () => heal(chain, executor));
      } else if (checkedAt === null) checkedAt = head;
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
        // One of ours was mined meanwhile, or someone else's took the nonce.
        if (nonceTooLow(err)) return minedOrTaken();
        // Underpriced: the next round bumps again from these fees. Anything else (say the executor cannot afford the
        // higher fee): what was sent stands, keep waiting for it.
        if (!underpriced(err)) {
          if (chain.dev && insufficientFunds(err)) await topUp(chain, executor.account.address);
          else log.warn({ chainId: chain.chainId, transaction: first.hash, error: redact(messageOf(err).split("\n")[0]!) }, "fee bump failed");
        }
      }
      nextBump = Date.now() + bumpAfterMs(chain);
    } else if (!rebroadcast && Date.now() - started > bumpAfterMs(chain) / 2) {
      // Rebroadcast once, in case the node never got it (an unanswered send).
      rebroadcast = true;
      await client.sendRawTransaction({ serializedTransaction: first.serialized }).catch(() => undefined);
    }
    await sleep(pollMs(chain));
  }
}
