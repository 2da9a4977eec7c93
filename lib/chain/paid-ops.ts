// The user operations our paymasters paid for, as the chain tells them: each EntryPoint's UserOperationEvent naming one
// of our paymasters, with where it is (transaction, block number and hash, log index). The ledger's one attribution
// point (lib/sponsorship/attribution.ts) takes them, whoever sent the bundle.
import { getAbiItem, isAddressEqual, parseEventLogs, type Address, type Hex, type Log, type PublicClient } from "viem";
import { entryPointAbi } from "@/contracts/artifacts";
import { ourPaymasters } from "./contracts";
import type { ChainConfig } from "./registry";

/** A UserOperationEvent one of our paymasters paid. */
export interface PaidOp {
  chainId: number;
  entryPoint: Address;
  paymaster: Address;
  userOpHash: Hex;
  sender: Address;
  nonce: bigint;
  success: boolean;
  actualGasCost: bigint;
  actualGasUsed: bigint;
  transactionHash: Hex;
  blockNumber: bigint;
  blockHash: Hex;
  logIndex: number;
}

export const userOperationEvent = getAbiItem({ abi: entryPointAbi, name: "UserOperationEvent" });

/** Our paymaster at the log's EntryPoint, when it is the one the event names. */
function ourPair(chain: ChainConfig, entryPoint: Address, paymaster: Address) {
  return ourPaymasters(chain).find((p) => isAddressEqual(p.entryPoint, entryPoint) && isAddressEqual(p.paymaster, paymaster));
}

/** The ops our paymasters paid among a transaction's (or a range's) logs, in log order. Logs without a block (pending) are skipped. */
export function paidOpsOf(chain: ChainConfig, logs: readonly Log[]): PaidOp[] {
  const entryPoints = ourPaymasters(chain).map((p) => p.entryPoint.toLowerCase());
  const events = parseEventLogs({ abi: entryPointAbi, eventName: "UserOperationEvent", logs: logs.filter((l) => entryPoints.includes(l.address.toLowerCase())) as Log[] });
  const paid: PaidOp[] = [];
  for (const event of events) {
    const pair = ourPair(chain, event.address, event.args.paymaster);
    if (!pair || event.blockHash === null || event.blockNumber === null || event.logIndex === null || event.transactionHash === null) continue;
    paid.push({
      chainId: chain.chainId,
      entryPoint: pair.entryPoint,
      paymaster: pair.paymaster,
      userOpHash: event.args.userOpHash.toLowerCase() as Hex,
      sender: event.args.sender,
      nonce: event.args.nonce,
      success: event.args.success,
      actualGasCost: event.args.actualGasCost,
      actualGasUsed: event.args.actualGasUsed,
      transactionHash: event.transactionHash,
      blockNumber: event.blockNumber,
      blockHash: event.blockHash,
      logIndex: event.logIndex,
    });
  }
  return paid;
}

/** The ops our paymasters paid in blocks from..to, read from `client` (one node: a range's logs never mix two nodes' heads). */
export async function readPaidOps(chain: ChainConfig, client: PublicClient, from: bigint, to: bigint): Promise<PaidOp[]> {
  const pairs = ourPaymasters(chain);
  if (pairs.length === 0 || to < from) return [];
  const perEntryPoint = await Promise.all(
    pairs.map(({ entryPoint, paymaster }) => client.getLogs({ address: entryPoint, event: userOperationEvent, args: { paymaster }, fromBlock: from, toBlock: to })),
  );
  return paidOpsOf(chain, perEntryPoint.flat() as Log[]).sort((a, b) => (a.blockNumber === b.blockNumber ? a.logIndex - b.logIndex : a.blockNumber < b.blockNumber ? -1 : 1));
}
