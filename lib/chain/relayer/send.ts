// Sending a bundle transaction from an executor: its nonce under a lock (resynced from the chain when taken), and
// waiting for it to be mined, with fee bumps while it is stuck.
import { keccak256, type Address, type Hex, type SignedAuthorization, type TransactionReceipt } from "viem";
import { redact } from "@/lib/redact";
import { isUnreachable, publicClient } from "@/lib/chain/clients";
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
export async function sendBundle(chain: ChainConfig, executor: Executor, call: BundleCall, fees: Fees): Promise<SentTransaction> {
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

export class NonceTakenError extends Error {}

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
export async function waitMined(
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
          else log.warn({ chainId: chain.chainId, transaction: first.hash, error: redact(messageOf(err).split("\n")[0]!) }, "fee bump failed");
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
