// The JSON-RPC error both RPCs (the ERC-7677 paymaster service, the bundler) throw and answer as {code, message, data}.
export class RpcError extends Error {
  constructor(
    readonly code: number,
    message: string,
    readonly data?: unknown,
  ) {
    super(message);
  }
}

/** -32602 invalid params, `data.field` naming the parameter when known. */
export const invalidParam = (message: string, field?: string) => new RpcError(-32602, message, field ? { field } : undefined);
