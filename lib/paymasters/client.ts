import { BaseError, HttpRequestError, http, ResponseBodyTooLargeError, RpcRequestError, TimeoutError, type Hex } from "viem";
import { createPaymasterClient, getPaymasterData, getPaymasterStubData, type PaymasterClient } from "viem/account-abstraction";
import { toEntryPointOp, type UserOp } from "@/lib/chain/userop";
import { envNumber } from "@/lib/config";
import { ApiError, badGateway, badRequest } from "@/lib/errors";
import { outboundFetch, OutboundRefusedError } from "@/lib/outbound";

/** How long an ERC-7677 service has to answer one call, its whole body included (viem reads it within the timeout). */
const timeoutMs = () => envNumber("PAYMASTER_TIMEOUT_MS", 10_000, { above: 0 });

/**
 * The most an answer may hold: an ERC-7677 result is a few hundred bytes of hex, so 64 KiB is generous; viem's own
 * default (10 MiB) would let a registered URL make every sponsored request buffer megabytes.
 */
const MAX_ANSWER_BYTES = 64 * 1024;

/** Only the origin is shown in errors: a service URL's path often carries an API key (ours carries the publishable key). */
export function originOf(url: string): string {
  try {
    return new URL(url).origin;
  } catch {
    return "the paymaster's url";
  }
}

/**
 * viem's ERC-7677 paymaster client for a user-set URL: every request goes through lib/outbound (https and public
 * addresses only in live mode, checked after DNS), never retried (a sponsorship request is not idempotent for the
 * service's own limits).
 */
export function paymasterClient(url: string, livemode: boolean): PaymasterClient {
  return createPaymasterClient({
    transport: http(url, {
      retryCount: 0,
      timeout: timeoutMs(),
      maxResponseBodySize: MAX_ANSWER_BYTES,
      fetchFn: (input, init) => {
        const headers: Record<string, string> = {};
        new Headers(init?.headers).forEach((value, name) => (headers[name] = value));
        const target = input instanceof Request ? input.url : input;
        return outboundFetch(target, { method: init?.method ?? "POST", headers, body: init?.body as string | undefined, signal: init?.signal ?? undefined }, { livemode });
      },
    }),
  });
}

export interface ServiceCall {
  url: string;
  livemode: boolean;
  chainId: number;
  entryPoint: Hex;
  context: Record<string, unknown> | null;
  /** Says who is asked, in errors ("Paymaster pay_… of policy pol_…"). */
  who: string;
  /** The parameter errors name (policy, or paymaster when checking one). */
  param: string;
  paramValue: string;
}

/** The op's fields an ERC-7677 service is sent: the struct without paymasterAndData and signature (it fills in the first). */
const opFields = (op: UserOp) => {
  const { paymasterAndData: _paymasterAndData, signature: _signature, ...fields } = toEntryPointOp(op);
  return fields;
};

/** Why a call gave no ERC-7677 result, for a 502: too large an answer, none in time, an HTTP error or none at all. */
function whyNoResult(err: unknown): string {
  if (!(err instanceof BaseError)) return "its answer is not an ERC-7677 result";
  if (err.walk((e) => e instanceof ResponseBodyTooLargeError)) return `its answer is larger than ${MAX_ANSWER_BYTES / 1024} KiB`;
  if (err.walk((e) => e instanceof TimeoutError)) return `no answer within ${timeoutMs() / 1000} s`;
  const failed = err.walk((e) => e instanceof HttpRequestError) as HttpRequestError | null;
  if (failed) return failed.status ? `HTTP ${failed.status}` : "the connection failed";
  return "its answer is not an ERC-7677 result";
}

/**
 * The service's failures as API errors naming `param`: its refusal (a JSON-RPC error) or a URL the outbound rule
 * refuses is a 400; no answer, an HTTP error or an answer that is not ERC-7677 is a 502.
 */
export function serviceError(call: ServiceCall, err: unknown): ApiError {
  const origin = originOf(call.url);
  const details = (message: string) => ({ [call.param]: { value: call.paramValue, message } });
  if (err instanceof ApiError) return err;
  const outbound = err instanceof BaseError ? err.walk((e) => e instanceof OutboundRefusedError) : err instanceof OutboundRefusedError ? err : null;
  if (outbound) {
    const message = `its url is not allowed: ${(outbound as Error).message}`;
    return badRequest(`${call.who}: ${message}.`, details(message));
  }
  const rpc = err instanceof BaseError ? (err.walk((e) => e instanceof RpcRequestError) as RpcRequestError | null) : null;
  if (rpc) {
    const message = `the paymaster service at ${origin} refused to sponsor: ${rpc.details || rpc.shortMessage} (code ${rpc.code})`;
    return badRequest(`${call.who}: ${message}.`, details(message));
  }
  const message = `the paymaster service at ${origin} could not sponsor (${whyNoResult(err)})`;
  return badGateway(`${call.who}: ${message}. Try again shortly.`, details(message));
}

async function asking<T>(call: ServiceCall, work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (err) {
    throw serviceError(call, err);
  }
}

/** A v0.6 result must carry paymasterAndData (a v0.7 paymaster/paymasterData answer is for another EntryPoint). */
function paymasterAndDataOf(call: ServiceCall, result: { paymasterAndData?: Hex }): Hex {
  const value = result.paymasterAndData;
  if (typeof value !== "string" || !/^0x([0-9a-fA-F]{2}){20,}$/.test(value)) {
    const message = `the paymaster service at ${originOf(call.url)} answered without a v0.6 paymasterAndData`;
    throw badGateway(`${call.who}: ${message}.`, { [call.param]: { value: call.paramValue, message } });
  }
  return value;
}

/** pm_getPaymasterStubData: paymasterAndData for gas estimation, and whether it is already final. */
export async function stubData(call: ServiceCall, op: UserOp): Promise<{ paymasterAndData: Hex; isFinal: boolean }> {
  const result = await asking(call, () =>
    getPaymasterStubData(paymasterClient(call.url, call.livemode), { ...opFields(op), chainId: call.chainId, entryPointAddress: call.entryPoint, context: call.context ?? undefined }),
  );
  return { paymasterAndData: paymasterAndDataOf(call, result), isFinal: result.isFinal === true };
}

/** pm_getPaymasterData: the final paymasterAndData for the op with its final gas values. */
export async function finalData(call: ServiceCall, op: UserOp): Promise<Hex> {
  const result = await asking(call, () =>
    getPaymasterData(paymasterClient(call.url, call.livemode), { ...opFields(op), chainId: call.chainId, entryPointAddress: call.entryPoint, context: call.context ?? undefined }),
  );
  return paymasterAndDataOf(call, result);
}

/** pm_supportedEntryPoints (a common extension of ERC-7677 services), for the dashboard's check. */
export async function supportedEntryPoints(call: ServiceCall): Promise<string[]> {
  const result: unknown = await asking(call, () => paymasterClient(call.url, call.livemode).request({ method: "pm_supportedEntryPoints" as never, params: [] as never }));
  if (!Array.isArray(result)) throw serviceError(call, new Error("not an array"));
  return result.map(String);
}
