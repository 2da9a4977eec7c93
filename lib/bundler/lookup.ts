// eth_getUserOperationByHash and eth_getUserOperationReceipt, read from the project's intents (any of its operations,
// sent through this RPC or built by the API): null for an unknown hash, another project's, or one that will not land.
import { getAddress, size, slice, toHex, zeroAddress, type Address, type Hex } from "viem";
import { onChain, publicClient } from "@/lib/chain/clients";
import type { ChainConfig } from "@/lib/chain/registry";
import type { Db } from "@/lib/db/client";
import { intentOfOperation } from "@/lib/intents/external";
import type { IntentRow } from "@/lib/intents/service";
import { isStoredV08 } from "@/lib/intent-records/versioned-op";
import type { ProjectContext } from "@/lib/tenant";
import { entryPointOf } from "@/lib/chain/contracts";
import { hashParam, positional } from "./params";

type RawReceipt = { blockHash: Hex; [key: string]: unknown };

/** The intent of the hash while it may still land or once it has; null otherwise. */
async function visibleIntent(db: Db, ctx: ProjectContext, chain: ChainConfig, params: unknown): Promise<IntentRow | null> {
  const [raw] = positional(params, 1, "userOpHash");
  const intent = await intentOfOperation(db, ctx, chain.chainId, hashParam(raw));
  if (!intent || intent.status === "awaiting_signature" || intent.status === "cancelled") return null;
  if (intent.status === "failed" && !intent.response) return null;
  return intent;
}

const bundleReceipt = (chain: ChainConfig, hash: Hex) =>
  onChain(chain, () => publicClient(chain).request({ method: "eth_getTransactionReceipt", params: [hash] }) as Promise<RawReceipt | null>);

const isV08 = (intent: IntentRow) => isStoredV08(intent.userOperation);

export const entryPointOfIntent = (intent: IntentRow): Address => entryPointOf(isV08(intent) ? "0.8" : "0.6");

/** The op in its version's RPC shape (v0.8: unpacked fields and eip7702Auth, as viem parses them), without our marker. */
function rpcOperation(intent: IntentRow): Record<string, unknown> {
  const { entryPointVersion: _version, ...op } = intent.userOperation as Record<string, unknown>;
  return op;
}

/** The paymaster that paid: v0.8's paymaster field, v0.6's first 20 bytes of paymasterAndData; zero for none. */
function paymasterOf(intent: IntentRow): Address {
  const op = intent.userOperation as Record<string, string | undefined>;
  if (isV08(intent)) return op.paymaster ? getAddress(op.paymaster) : zeroAddress;
  const paymasterAndData = (op.paymasterAndData ?? "0x") as Hex;
  return size(paymasterAndData) >= 20 ? getAddress(slice(paymasterAndData, 0, 20)) : zeroAddress;
}

export async function getUserOperationByHash(db: Db, ctx: ProjectContext, chain: ChainConfig, params: unknown) {
  const intent = await visibleIntent(db, ctx, chain, params);
  if (!intent) return null;
  const landed = intent.transactionHash && intent.blockNumber !== null ? await bundleReceipt(chain, intent.transactionHash as Hex) : null;
  return {
    userOperation: rpcOperation(intent),
    entryPoint: entryPointOfIntent(intent),
    transactionHash: landed ? intent.transactionHash : null,
    blockHash: landed?.blockHash ?? null,
    blockNumber: landed ? toHex(intent.blockNumber!) : null,
  };
}

interface StoredLog {
  removed?: boolean;
  transactionIndex: number;
  blockNumber: number;
  transactionHash: Hex;
  address: Address;
  topics: Hex[];
  data: Hex;
  logIndex: number;
  blockHash: Hex;
}

export async function getUserOperationReceipt(db: Db, ctx: ProjectContext, chain: ChainConfig, params: unknown) {
  const intent = await visibleIntent(db, ctx, chain, params);
  if (!intent?.response || !intent.transactionHash) return null;
  const receipt = await bundleReceipt(chain, intent.transactionHash as Hex);
  if (!receipt) return null; // reorganised away: the relay will record it again
  const response = intent.response as { status: 0 | 1; error?: string; logs: StoredLog[] };
  const op = intent.userOperation as Record<string, string>;
  return {
    userOpHash: intent.userOperationHash,
    entryPoint: entryPointOfIntent(intent),
    sender: getAddress(op.sender!),
    nonce: op.nonce,
    paymaster: paymasterOf(intent),
    actualGasCost: toHex(BigInt(intent.gasCost ?? 0)),
    actualGasUsed: toHex(BigInt(intent.gasUsed ?? 0)),
    success: response.status === 1,
    ...(response.error && { reason: response.error }),
    logs: response.logs.map((log) => ({
      removed: log.removed ?? false,
      transactionIndex: toHex(log.transactionIndex),
      blockNumber: toHex(log.blockNumber),
      transactionHash: log.transactionHash,
      address: log.address,
      topics: log.topics,
      data: log.data,
      logIndex: toHex(log.logIndex),
      blockHash: log.blockHash,
    })),
    receipt,
  };
}
