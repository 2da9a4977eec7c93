// The bundler RPC's parameters: the entry point (which version's rules apply) and the user operation as JSON-RPC
// sends it (hex quantities and bytes), each bad field a -32602 naming it.
import { getAddress, isAddressEqual, type Address, type Hex } from "viem";
import { z } from "zod";
import { serviceDeployment } from "@/lib/chain/contracts";
import type { UserOp } from "@/lib/chain/userop";
import { invalidParams } from "./errors";

export type EntryPointVersion = "0.6";

export interface SupportedEntryPoint {
  version: EntryPointVersion;
  address: Address;
}

/**
 * The entry points this bundler serves, in the order eth_supportedEntryPoints lists them. The seam for v0.8: once
 * lib/chain/userop builds, hashes, estimates and relays v0.8 PackedUserOperations, add
 * `{ version: "0.8", address: serviceDeployment().entryPointV08 }` here and a v0.8 branch where `version` is read
 * (parsing below, hashing/simulation in send.ts and estimate.ts, the receipt's EntryPoint in lookup.ts).
 */
export function supportedEntryPoints(): SupportedEntryPoint[] {
  return [{ version: "0.6", address: serviceDeployment().entryPoint }];
}

export function entryPointOf(raw: unknown): SupportedEntryPoint {
  const supported = supportedEntryPoints();
  const found = typeof raw === "string" && /^0x[0-9a-fA-F]{40}$/.test(raw) ? supported.find((e) => isAddressEqual(e.address, raw as Address)) : undefined;
  if (!found) {
    throw invalidParams(`Unsupported entryPoint ${String(raw)}: this bundler serves ${supported.map((e) => `v${e.version} at ${e.address}`).join(", ")}.`, "entryPoint");
  }
  return found;
}

const quantity = z.string({ error: "is required (a 0x-prefixed hex quantity)" }).regex(/^0x[0-9a-fA-F]{1,64}$/, "must be a 0x-prefixed hex quantity");
const bytes = z.string({ error: "is required (0x-prefixed hex bytes)" }).regex(/^0x([0-9a-fA-F]{2})*$/, "must be 0x-prefixed hex bytes").max(200_002, "is too long");
const address = z.string({ error: "is required (an address)" }).regex(/^0x[0-9a-fA-F]{40}$/, "must be an address");

const gasFields = {
  callGasLimit: quantity,
  verificationGasLimit: quantity,
  preVerificationGas: quantity,
  maxFeePerGas: quantity,
  maxPriorityFeePerGas: quantity,
};

/** A v0.6 op as eth_sendUserOperation takes it: every field (initCode and paymasterAndData may be left out for "0x"). */
const sendable06 = z.object(
  { sender: address, nonce: quantity, initCode: bytes.default("0x"), callData: bytes, ...gasFields, paymasterAndData: bytes.default("0x"), signature: bytes },
  { error: "must be a user operation object" },
);

/** A v0.6 op to estimate: gas fields, paymasterAndData (a paymaster's stub) and signature (a stub) may be left out. */
const estimable06 = z.object(
  {
    sender: address,
    nonce: quantity,
    initCode: bytes.default("0x"),
    callData: bytes,
    ...Object.fromEntries(Object.entries(gasFields).map(([k, v]) => [k, v.default("0x0")])),
    paymasterAndData: bytes.default("0x"),
    signature: bytes.default("0x"),
  },
  { error: "must be a user operation object" },
);

function parse<T>(schema: z.ZodType<T>, value: unknown, name: string): T {
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  const issue = result.error.issues[0]!;
  const field = [name, ...issue.path].join(".");
  throw invalidParams(`Invalid ${field}: ${field} ${issue.message}.`, field);
}

type RawOp = z.output<typeof sendable06>;

const toOp = (raw: RawOp): UserOp => ({
  sender: getAddress(raw.sender),
  nonce: BigInt(raw.nonce),
  initCode: raw.initCode as Hex,
  callData: raw.callData as Hex,
  callGasLimit: BigInt(raw.callGasLimit),
  verificationGasLimit: BigInt(raw.verificationGasLimit),
  preVerificationGas: BigInt(raw.preVerificationGas),
  maxFeePerGas: BigInt(raw.maxFeePerGas),
  maxPriorityFeePerGas: BigInt(raw.maxPriorityFeePerGas),
  paymasterAndData: raw.paymasterAndData as Hex,
  signature: raw.signature as Hex,
});

export const sendableOperation = (raw: unknown): UserOp => toOp(parse(sendable06, raw, "userOperation"));
export const estimableOperation = (raw: unknown): UserOp => toOp(parse(estimable06 as unknown as z.ZodType<RawOp>, raw, "userOperation"));

/** `params` as a positional array of at least `min` items, naming them when not. */
export function positional(params: unknown, min: number, names: string): unknown[] {
  if (!Array.isArray(params) || params.length < min) throw invalidParams(`params must be [${names}].`, "params");
  return params;
}

/** A 32-byte hash parameter (a userOpHash). */
export function hashParam(raw: unknown, name = "userOpHash"): Hex {
  if (typeof raw !== "string" || !/^0x[0-9a-fA-F]{64}$/.test(raw)) throw invalidParams(`Invalid ${name}: it must be a 32-byte 0x-prefixed hex hash.`, name);
  return raw.toLowerCase() as Hex;
}
