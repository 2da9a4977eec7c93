// The bundler RPC's methods (ERC-4337 eth_*, the fee methods bundler clients ask, ERC-7677 pm_* of the paymaster
// service): one JSON-RPC call on one chain of the key's mode, answered or thrown (errors.ts codes it).
import { toHex } from "viem";
import { chainFor, type ChainConfig } from "@/lib/chain/registry";
import type { Db } from "@/lib/db/client";
import { paymasterRpc } from "@/lib/paymaster-service/rpc";
import type { ProjectContext } from "@/lib/tenant";
import { BundlerCode, invalidParams, RpcError } from "./errors";
import { estimateUserOperationGas, maxPriorityFeePerGas, userOperationGasPrice } from "./estimate";
import { getUserOperationByHash, getUserOperationReceipt } from "./lookup";
import { supportedEntryPoints } from "./params";
import { sendUserOperation } from "./send";

export const BUNDLER_METHODS = [
  "eth_chainId",
  "eth_supportedEntryPoints",
  "eth_estimateUserOperationGas",
  "eth_sendUserOperation",
  "eth_getUserOperationByHash",
  "eth_getUserOperationReceipt",
  "pimlico_getUserOperationGasPrice",
  "rundler_maxPriorityFeePerGas",
  "pm_getPaymasterStubData",
  "pm_getPaymasterData",
  "pm_supportedEntryPoints",
] as const;

/** The chain of the URL, one of the key's mode: a -32602 naming the mode's chains otherwise. */
export function rpcChain(ctx: ProjectContext, raw: string): ChainConfig {
  const chainId = /^\d{1,10}$/.test(raw) ? Number(raw) : NaN;
  try {
    return chainFor(ctx, chainId);
  } catch (err) {
    throw invalidParams(`${(err as Error).message} Use /rpc/{chainId} with one of them.`, "chainId");
  }
}

/** pm_* name their chain in params: it must be the URL's (the paymaster service checks the rest). */
function sameChain(chain: ChainConfig, params: unknown): unknown {
  const chainId = Array.isArray(params) ? params[2] : undefined;
  if (typeof chainId === "string" && /^0x[0-9a-fA-F]+$/.test(chainId) && Number(chainId) !== chain.chainId) {
    throw invalidParams(`params[2] chainId ${chainId} is not this URL's chain ${chain.chainId}.`, "chainId");
  }
  return params;
}

export async function bundlerRpc(db: Db, ctx: ProjectContext, chain: ChainConfig, method: string, params: unknown): Promise<unknown> {
  switch (method) {
    case "eth_chainId":
      return toHex(chain.chainId);
    case "eth_supportedEntryPoints":
      return supportedEntryPoints(chain).map((e) => e.address);
    case "eth_estimateUserOperationGas":
      return estimateUserOperationGas(db, ctx, chain, params);
    case "eth_sendUserOperation":
      return sendUserOperation(db, ctx, chain, params);
    case "eth_getUserOperationByHash":
      return getUserOperationByHash(db, ctx, chain, params);
    case "eth_getUserOperationReceipt":
      return getUserOperationReceipt(db, ctx, chain, params);
    case "pimlico_getUserOperationGasPrice":
      return userOperationGasPrice(chain);
    case "rundler_maxPriorityFeePerGas":
      return maxPriorityFeePerGas(chain);
    case "pm_getPaymasterStubData":
    case "pm_getPaymasterData":
    case "pm_supportedEntryPoints":
      // One implementation of ERC-7677: the paymaster service's, with its policies, bounds, sender checks and holds.
      return paymasterRpc(db, ctx, method, sameChain(chain, params), chain);
    default:
      throw new RpcError(BundlerCode.methodNotFound, `Method not found: ${method}. This bundler serves ${BUNDLER_METHODS.join(", ")}.`);
  }
}
