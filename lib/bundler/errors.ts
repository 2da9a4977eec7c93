// The bundler RPC's errors: ERC-4337 / ERC-7769 codes as bundlers answer them (alto, Rundler), ERC-7677's for pm_*.
import { CallRevertedError, InsufficientFundsError, UserOperationRejectedError } from "@/lib/chain/userop";
import { RpcError, rpcErrorOf } from "@/lib/paymaster-service/rpc";

export { RpcError };

export const BundlerCode = {
  invalidRequest: -32600,
  methodNotFound: -32601,
  invalidParams: -32602,
  /** Rejected by the EntryPoint's validation of the account (or its deployment): AA1x, AA2x, AA4x, AA5x. */
  rejected: -32500,
  /** Rejected by the paymaster's validation: AA3x. */
  paymaster: -32501,
  /** Out of its time range (AA22 / AA32: expired or not due yet). */
  timeRange: -32503,
  /** The call itself reverts (estimation). */
  reverted: -32521,
} as const;

export const invalidParams = (message: string, field?: string) => new RpcError(BundlerCode.invalidParams, message, field ? { field } : undefined);

/** An EntryPoint refusal as bundlers code it: the paymaster's AA3x, a time range's AA22/AA32, the rest -32500; the AA reason in data. */
export function rejection(err: UserOperationRejectedError): RpcError {
  const code = err.code === "AA22" || err.code === "AA32" ? BundlerCode.timeRange : err.code?.startsWith("AA3") ? BundlerCode.paymaster : BundlerCode.rejected;
  return new RpcError(code, err.message, { reason: err.reason, ...(err.code && { code: err.code }) });
}

/** Any error as a JSON-RPC error object: ours above, the paymaster service's (ERC-7677) for the rest. */
export function bundlerErrorOf(err: unknown): { code: number; message: string; data?: unknown } {
  if (err instanceof UserOperationRejectedError) return rpcErrorOf(rejection(err));
  if (err instanceof CallRevertedError) return { code: BundlerCode.reverted, message: err.message, data: { revertData: err.revertData, reason: err.reason } };
  // The account cannot pay its prefund: the EntryPoint would refuse it with AA21.
  if (err instanceof InsufficientFundsError) return { code: BundlerCode.rejected, message: `AA21 didn't pay prefund: ${err.message}`, data: { code: "AA21" } };
  return rpcErrorOf(err);
}
