// The bundler RPC's parameters: the entry point (which version's rules apply: v0.6 or v0.8, as the chain offers them)
// and the user operation as JSON-RPC sends it in that version's shape (hex quantities and bytes; v0.8's unpacked
// factory/paymaster fields and eip7702Auth), each bad field a -32602 naming it.
import { isAddressEqual, type Address, type Hex } from "viem";
import { z } from "zod";
import { entryPointOf as entryPointOfVersion, offeredEntryPoints } from "@/lib/chain/contracts";
import type { ChainConfig } from "@/lib/chain/registry";
import {
  address,
  bytes,
  estimableV08,
  otherVersionField,
  quantity,
  sendableV08,
  toUserOp06,
  toUserOpV08,
  type EntryPointVersion,
  type VersionedUserOp,
} from "@/lib/paymasters/op-params";
import { invalidParams } from "./errors";

export type { EntryPointVersion };

export interface SupportedEntryPoint {
  version: EntryPointVersion;
  address: Address;
}

/** The entry points this bundler serves on the chain (those it offers, v0.6 first), as eth_supportedEntryPoints lists them. */
export const supportedEntryPoints = (chain: ChainConfig): SupportedEntryPoint[] => offeredEntryPoints(chain);

export function entryPointOf(chain: ChainConfig, raw: unknown): SupportedEntryPoint {
  const supported = supportedEntryPoints(chain);
  const found = typeof raw === "string" && /^0x[0-9a-fA-F]{40}$/.test(raw) ? supported.find((e) => isAddressEqual(e.address, raw as Address)) : undefined;
  if (!found) {
    throw invalidParams(`Unsupported entryPoint ${String(raw)}: this bundler serves ${supported.map((e) => `v${e.version} at ${e.address}`).join(", ")} on chain ${chain.chainId}.`, "entryPoint");
  }
  return found;
}

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


/** Fields of the other version's shape mean the op was sent with the wrong entryPoint: -32602 naming the field. */
function sameVersion(raw: unknown, version: EntryPointVersion): void {
  const stray = otherVersionField(raw, version);
  if (!stray) return;
  const other = version === "0.6" ? "0.8" : "0.6";
  throw invalidParams(
    `Invalid userOperation.${stray}: it is a field of EntryPoint v${other} operations, but the entryPoint given is v${version}'s. Send a v${other} operation with entryPoint ${entryPointOfVersion(other)}.`,
    `userOperation.${stray}`,
  );
}

export function sendableOperation(raw: unknown, version: EntryPointVersion): VersionedUserOp {
  sameVersion(raw, version);
  if (version === "0.8") return { version, op: toUserOpV08(parse(sendableV08, raw, "userOperation")) };
  return { version, op: toUserOp06(parse(sendable06, raw, "userOperation")) };
}

export function estimableOperation(raw: unknown, version: EntryPointVersion): VersionedUserOp {
  sameVersion(raw, version);
  if (version === "0.8") return { version, op: toUserOpV08(parse(estimableV08, raw, "userOperation")) };
  return { version, op: toUserOp06(parse(estimable06 as unknown as z.ZodType<RawOp>, raw, "userOperation")) };
}

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
