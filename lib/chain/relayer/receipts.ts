// UserOperationEvent receipts of EntryPoint v0.6 or v0.8: read from a transaction's logs, looked up on chain (or at
// the bundler), waited for.
import { BaseError, getAbiItem, parseEventLogs, type Address, type Hex, type Log } from "viem";
import { UserOperationReceiptNotFoundError } from "viem/account-abstraction";
import { entryPointAbi } from "@/contracts/artifacts";
import { ApiError } from "@/lib/errors";
import { publicClient } from "@/lib/chain/clients";
import { serviceDeployment } from "@/lib/chain/contracts";
import type { ChainConfig } from "@/lib/chain/registry";
import { describeRevert } from "@/lib/chain/userop";
import { bundlerFor, pollMs, sleep, state } from "./config";
import type { RelayedUserOperationReceipt } from "./types";

export class UserOperationReceiptTimeoutError extends ApiError {
  constructor(
    readonly userOpHash: Hex,
    timeoutMs: number,
  ) {
    super(504, "api_error", `User operation ${userOpHash} was not included within ${Math.round(timeoutMs / 1000)} s.`);
  }
}

const userOperationEvent = getAbiItem({ abi: entryPointAbi, name: "UserOperationEvent" });

/** Our EntryPoints (v0.6 and v0.8): their UserOperationEvent and UserOperationRevertReason have the same shape. */
const entryPoints = (): Address[] => {
  const { entryPoint, entryPointV08 } = serviceDeployment();
  return [entryPoint, entryPointV08];
};

/** The UserOperationEvent receipts (with revert reasons) of either EntryPoint in a transaction's logs, by userOp hash. */
export function receiptsFromLogs(logs: Log[], transactionHash: Hex, blockNumber: bigint): Map<Hex, RelayedUserOperationReceipt> {
  const ours = entryPoints().map((a) => a.toLowerCase());
  const events = parseEventLogs({
    abi: entryPointAbi,
    logs: logs.filter((log) => ours.includes(log.address.toLowerCase())),
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
      address: entryPoints(),
      event: userOperationEvent,
      args: { userOpHash },
      fromBlock: start,
      // The newest range up to whatever head the node answering has: the number read before may be another node's,
      // behind it (a fallback transport), and an op of the last blocks must not be missed (it would be sent again).
      toBlock: to === latest ? "latest" : to,
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

/**
 * The receipts of those ops already on chain, by lowercase userOp hash (the others absent): one log search for them all (a
 * bundle's ops, looked for again after a crash), and each bundle's receipt once. Through a bundler, one call per op.
 */
export async function findUserOperationReceipts(chain: ChainConfig, userOpHashes: Hex[]): Promise<Map<Hex, RelayedUserOperationReceipt>> {
  const found = new Map<Hex, RelayedUserOperationReceipt>();
  if (userOpHashes.length === 0) return found;
  if (chain.bundlerUrl) {
    const receipts = await Promise.all(userOpHashes.map((hash) => findUserOperationReceipt(chain, hash)));
    receipts.forEach((receipt, i) => receipt && found.set(userOpHashes[i]!.toLowerCase() as Hex, receipt));
    return found;
  }
  const client = publicClient(chain);
  const latest = await client.getBlockNumber({ cacheTime: 0 });
  const lookback = state().config.receiptLookbackBlocks;
  const from = latest > lookback ? latest - lookback : 0n;
  const asked = new Set(userOpHashes.map((h) => h.toLowerCase()));
  const wanted = new Set(asked);
  const transactions = new Set<Hex>();
  for (let to = latest; to >= from && wanted.size > 0; to -= LOG_CHUNK_BLOCKS) {
    const start = to - LOG_CHUNK_BLOCKS + 1n > from ? to - LOG_CHUNK_BLOCKS + 1n : from;
    const logs = await client.getLogs({ address: entryPoints(), event: userOperationEvent, args: { userOpHash: userOpHashes }, fromBlock: start, toBlock: to === latest ? "latest" : to });
    for (const log of logs) transactions.add(log.transactionHash);
    for (const log of logs) wanted.delete(log.args.userOpHash!.toLowerCase());
    if (start === 0n) break;
  }
  const receipts = await Promise.all([...transactions].map((hash) => client.getTransactionReceipt({ hash })));
  for (const receipt of receipts) {
    for (const [hash, op] of receiptsFromLogs(receipt.logs, receipt.transactionHash, receipt.blockNumber)) if (asked.has(hash.toLowerCase())) found.set(hash.toLowerCase() as Hex, op);
  }
  return found;
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
