import { z } from "zod";
import { unauthorized } from "@/lib/errors";
import { defineOperation } from "@/lib/http/operation";
import type { AuthStrategy } from "@/lib/http/principals";
import { findPublishableKey } from "@/lib/projects/service";
import { paymasterRpc, rpcErrorOf, rpcId, RpcError } from "./rpc";
import { log } from "@/lib/log";

/**
 * The project's publishable key in the path: a URL an ERC-7677 client (or a registered paymaster) can carry
 * without a header, and that may sit in a browser (the secret key must never be in a URL). What it can get is
 * bounded by the policy the request names: its rules decide every sponsorship. A bad key is a 401 before the body is read.
 */
export const publishableKeyInServicePath: AuthStrategy<{ kind: "paymasterService"; publishableKey: string }> = {
  security: [],
  apiRequest: true,
  perAddress: true,
  async authenticate(db, { params }) {
    const key = params.publishableKey ?? "";
    const found = key.startsWith("pk_") ? await findPublishableKey(db, key) : null;
    if (!found) throw unauthorized("The paymaster service URL must carry a valid publishable key: /v1/paymaster_service/pk_....");
    return { principal: { kind: "paymasterService", publishableKey: key }, project: { projectId: found.projectId, livemode: found.livemode } };
  },
};

const rpcRequest = z.looseObject({ jsonrpc: z.unknown().optional(), id: z.unknown().optional(), method: z.unknown().optional(), params: z.unknown().optional() });

const rpcResponse = z.union([
  z.object({ jsonrpc: z.literal("2.0"), id: z.union([z.string(), z.number(), z.null()]), result: z.unknown() }),
  z.object({ jsonrpc: z.literal("2.0"), id: z.union([z.string(), z.number(), z.null()]), error: z.object({ code: z.number().int(), message: z.string(), data: z.unknown().optional() }) }),
]);

export const paymasterServiceRpc = defineOperation({
  operationId: "paymasterService",
  cost: "chain",
  method: "POST",
  path: "/v1/paymaster_service/{publishableKey}",
  summary:
    "ERC-7677 paymaster service (JSON-RPC 2.0) of this service's VerifyingPaymaster: pm_getPaymasterStubData, pm_getPaymasterData, pm_supportedEntryPoints. " +
    'The context names the policy whose rules decide: {"policy":"pol_..."}. Errors are JSON-RPC errors with HTTP 200.',
  tag: "Paymasters",
  auth: publishableKeyInServicePath,
  input: rpcRequest,
  response: rpcResponse,
  run: async ({ db, project, input }) => {
    const id = rpcId(input.id);
    try {
      if (input.jsonrpc !== "2.0" || typeof input.method !== "string") throw new RpcError(-32600, 'Invalid request: expected {"jsonrpc":"2.0","id":…,"method":…,"params":[…]}.');
      return { jsonrpc: "2.0" as const, id, result: await paymasterRpc(db, project, input.method, input.params) };
    } catch (err) {
      const error = rpcErrorOf(err);
      if (error.code === -32603) log.error({ err }, "paymaster service failed");
      return { jsonrpc: "2.0" as const, id, error };
    }
  },
});
