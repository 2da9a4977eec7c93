import { z } from "zod";
import { bearerToken } from "@/lib/http/auth";
import { unauthorized } from "@/lib/errors";
import { defineOperation } from "@/lib/http/operation";
import type { AuthStrategy } from "@/lib/http/principals";
import { log } from "@/lib/log";
import { findPublishableKey } from "@/lib/projects/service";
import { bundlerErrorOf, BundlerCode, RpcError } from "./errors";
import { bundlerRpc, rpcChain } from "./rpc";

/**
 * The project's publishable key as `Authorization: Bearer pk_…` or `?apiKey=pk_…`, so a standard client can use the
 * URL as it is. What it can get is bounded as for the paymaster service: the project's own accounts, and the policy
 * the paymaster context names. A bad or missing key is a 401 before the body is read.
 */
export const publishableKeyForRpc: AuthStrategy<{ kind: "bundlerRpc"; publishableKey: string }> = {
  security: [{ bearerAuth: [] }],
  apiRequest: true,
  perAddress: true,
  async authenticate(db, { request, url }) {
    const key = bearerToken(request) ?? url.searchParams.get("apiKey") ?? "";
    const found = key.startsWith("pk_") ? await findPublishableKey(db, key) : null;
    if (!found) {
      const why = key.startsWith("sk_") ? "A secret key must never be sent here (the URL may sit in a browser): use the project's publishable key." : "Send the project's publishable key as Authorization: Bearer pk_... or as ?apiKey=pk_....";
      throw unauthorized(key ? `Invalid API key for the bundler RPC. ${why}` : `You did not provide an API key. ${why}`);
    }
    return { principal: { kind: "bundlerRpc", publishableKey: key }, project: { projectId: found.projectId, livemode: found.livemode } };
  },
};

const rpcRequest = z.looseObject({ jsonrpc: z.unknown().optional(), id: z.unknown().optional(), method: z.unknown().optional(), params: z.unknown().optional() });
const rpcId = z.union([z.string(), z.number(), z.null()]);
const rpcResponse = z.union([
  z.object({ jsonrpc: z.literal("2.0"), id: rpcId, result: z.unknown() }),
  z.object({ jsonrpc: z.literal("2.0"), id: rpcId, error: z.object({ code: z.number().int(), message: z.string(), data: z.unknown().optional() }) }),
]);

export const bundlerRpcOperation = defineOperation({
  operationId: "bundlerRpc",
  cost: "chain",
  method: "POST",
  path: "/rpc/{chainId}",
  summary:
    "ERC-4337 bundler and ERC-7677 paymaster (JSON-RPC 2.0) for standard clients (viem, permissionless), EntryPoint v0.6 and v0.8 (EIP-7702 ops of Delegated_v08 accounts with eip7702Auth): eth_chainId, eth_supportedEntryPoints, " +
    "eth_estimateUserOperationGas, eth_sendUserOperation, eth_getUserOperationByHash, eth_getUserOperationReceipt, pimlico_getUserOperationGasPrice, " +
    'rundler_maxPriorityFeePerGas, pm_getPaymasterStubData, pm_getPaymasterData, pm_supportedEntryPoints (context {"policy":"pol_..."}). ' +
    "Authenticated by the publishable key (Bearer or ?apiKey=). Operations sent become transaction intents (source rpc) of the project's accounts. " +
    "Errors are JSON-RPC errors with HTTP 200: -32602 invalid params (data.field), -32500 rejected by the EntryPoint (AAxx), -32501 by the paymaster, -32503 out of its time range, -32521 the call reverts, -32601 unknown method.",
  tag: "Paymasters",
  auth: publishableKeyForRpc,
  input: rpcRequest,
  response: rpcResponse,
  run: async ({ db, project, input, params }) => {
    const id = typeof input.id === "string" || typeof input.id === "number" ? input.id : null;
    try {
      if (input.jsonrpc !== "2.0" || typeof input.method !== "string") {
        throw new RpcError(BundlerCode.invalidRequest, 'Invalid request: expected {"jsonrpc":"2.0","id":…,"method":…,"params":[…]} (batches are not served).');
      }
      const chain = rpcChain(project, params.chainId ?? "");
      return { jsonrpc: "2.0" as const, id, result: await bundlerRpc(db, project, chain, input.method, input.params) };
    } catch (err) {
      const error = bundlerErrorOf(err);
      if (error.code === -32603) log.error({ err }, "bundler RPC failed");
      return { jsonrpc: "2.0" as const, id, error };
    }
  },
});

export const bundlerOperations = [bundlerRpcOperation];
