// User operations as JSON-RPC carries them (ERC-4337 / ERC-7677 / ERC-7769 shapes), for both EntryPoint versions:
// v0.6's initCode/paymasterAndData, v0.8's unpacked factory and paymaster fields and eip7702Auth. Shared by the
// paymaster service and the bundler RPC so both read an op the same way.
import { getAddress, type Address, type Hex, type SignedAuthorization } from "viem";
import { z } from "zod";
import type { UserOp, UserOpV08 } from "@/lib/chain/userop";

export type EntryPointVersion = "0.6" | "0.8";

/** An op of either EntryPoint version. */
export type VersionedUserOp = { version: "0.6"; op: UserOp } | { version: "0.8"; op: UserOpV08 };

export const quantity = z.string({ error: "is required (a 0x-prefixed hex quantity)" }).regex(/^0x[0-9a-fA-F]{1,64}$/, "must be a 0x-prefixed hex quantity");
export const bytes = z
  .string({ error: "is required (0x-prefixed hex bytes)" })
  .regex(/^0x([0-9a-fA-F]{2})*$/, "must be 0x-prefixed hex bytes")
  .max(200_002, "is too long");
export const address = z.string({ error: "is required (an address)" }).regex(/^0x[0-9a-fA-F]{40}$/, "must be an address");
const bytes32 = z.string({ error: "is required (32 bytes)" }).regex(/^0x[0-9a-fA-F]{1,64}$/, "must be a 0x-prefixed hex number of at most 32 bytes");
/** v0.8's factory: an address, or the EIP-7702 marker 0x7702 (short or padded to 20 bytes). */
const factory = z.string().regex(/^0x(7702|[0-9a-fA-F]{40})$/, "must be an address or the EIP-7702 marker 0x7702");

/** EIP-7702 authorization as ERC-7769 (and viem) sends it: eip7702Auth {address, chainId, nonce, r, s, yParity}. */
export const eip7702Auth = z.object(
  { address, chainId: quantity, nonce: quantity, r: bytes32, s: bytes32, yParity: quantity },
  { error: "must be a signed EIP-7702 authorization {address, chainId, nonce, r, s, yParity}" },
);

/** The fields each version has and the other lacks: an op carrying the other's is sent to the wrong EntryPoint. */
const ONLY_IN: Record<EntryPointVersion, string[]> = {
  "0.6": ["initCode", "paymasterAndData"],
  "0.8": ["factory", "factoryData", "paymaster", "paymasterData", "paymasterVerificationGasLimit", "paymasterPostOpGasLimit", "eip7702Auth"],
};

/**
 * A field of the other version's shape that `raw` carries (a non-empty value), or null: a v0.8 op sent for v0.6 (or
 * the reverse) would otherwise be read without the fields that make it what it is.
 */
export function otherVersionField(raw: unknown, version: EntryPointVersion): string | null {
  if (typeof raw !== "object" || raw === null) return null;
  const other = version === "0.6" ? "0.8" : "0.6";
  for (const key of ONLY_IN[other]) {
    const value = (raw as Record<string, unknown>)[key];
    if (value !== undefined && value !== null && value !== "0x") return key;
  }
  return null;
}

export function authorizationOf(raw: z.output<typeof eip7702Auth>): SignedAuthorization {
  return {
    address: getAddress(raw.address),
    chainId: Number(BigInt(raw.chainId)),
    nonce: Number(BigInt(raw.nonce)),
    r: `0x${raw.r.slice(2).padStart(64, "0")}` as Hex,
    s: `0x${raw.s.slice(2).padStart(64, "0")}` as Hex,
    yParity: Number(BigInt(raw.yParity)),
  };
}

const gas = { callGasLimit: quantity, verificationGasLimit: quantity, preVerificationGas: quantity, maxFeePerGas: quantity, maxPriorityFeePerGas: quantity };
const paymasterGas = { paymasterVerificationGasLimit: quantity.optional(), paymasterPostOpGasLimit: quantity.optional() };
const withDefaults = <T extends Record<string, z.ZodString>>(fields: T) =>
  Object.fromEntries(Object.entries(fields).map(([k, v]) => [k, v.default("0x0")])) as { [K in keyof T]: z.ZodDefault<T[K]> };

const v08Base = { sender: address, nonce: quantity, factory: factory.optional(), factoryData: bytes.optional(), callData: bytes, eip7702Auth: eip7702Auth.optional() };

/**
 * A v0.8 op as a paymaster is asked for it (ERC-7677): gas fields may still be missing (a stub is asked before
 * estimation), paymaster fields are the paymaster's to fill, the signature is not read.
 */
export const sponsorableV08 = z.object({ ...v08Base, ...withDefaults(gas), ...paymasterGas }, { error: "must be a user operation object" });

/** A v0.8 op to estimate: as sponsorable, with a paymaster's stub fields used in simulation when given. */
export const estimableV08 = z.object(
  { ...v08Base, ...withDefaults(gas), paymaster: address.optional(), paymasterData: bytes.optional(), ...paymasterGas, signature: bytes.default("0x") },
  { error: "must be a user operation object" },
);

/** A v0.8 op as eth_sendUserOperation takes it: every field (factory and paymaster fields may be left out together). */
export const sendableV08 = z
  .object(
    { ...v08Base, ...gas, paymaster: address.optional(), paymasterData: bytes.optional(), ...paymasterGas, signature: bytes },
    { error: "must be a user operation object" },
  )
  .superRefine((op, ctx) => {
    if (!op.paymaster) return;
    for (const key of ["paymasterVerificationGasLimit", "paymasterPostOpGasLimit", "paymasterData"] as const) {
      if (op[key] === undefined) ctx.addIssue({ code: "custom", path: [key], message: "is required with paymaster" });
    }
  });

type RawV08 = z.output<typeof estimableV08>;

/** A v0.6 op from its parsed JSON-RPC fields (hex strings); paymasterAndData and signature "0x" when not given. */
export function toUserOp06(raw: {
  sender: string;
  nonce: string;
  initCode: string;
  callData: string;
  callGasLimit: string;
  verificationGasLimit: string;
  preVerificationGas: string;
  maxFeePerGas: string;
  maxPriorityFeePerGas: string;
  paymasterAndData?: string;
  signature?: string;
}): UserOp {
  return {
    sender: getAddress(raw.sender),
    nonce: BigInt(raw.nonce),
    initCode: raw.initCode as Hex,
    callData: raw.callData as Hex,
    callGasLimit: BigInt(raw.callGasLimit),
    verificationGasLimit: BigInt(raw.verificationGasLimit),
    preVerificationGas: BigInt(raw.preVerificationGas),
    maxFeePerGas: BigInt(raw.maxFeePerGas),
    maxPriorityFeePerGas: BigInt(raw.maxPriorityFeePerGas),
    paymasterAndData: (raw.paymasterAndData ?? "0x") as Hex,
    signature: (raw.signature ?? "0x") as Hex,
  };
}

/** An op of the v0.8 shapes above as viem's UserOperation<"0.8"> (the 7702 marker kept as the op's factory). */
export function toUserOpV08(raw: Omit<RawV08, "paymaster" | "paymasterData" | "signature"> & Partial<Pick<RawV08, "paymaster" | "paymasterData" | "signature">>): UserOpV08 {
  const big = (v: string | undefined) => (v === undefined ? undefined : BigInt(v));
  const op: UserOpV08 = {
    sender: getAddress(raw.sender),
    nonce: BigInt(raw.nonce),
    callData: raw.callData as Hex,
    callGasLimit: BigInt(raw.callGasLimit),
    verificationGasLimit: BigInt(raw.verificationGasLimit),
    preVerificationGas: BigInt(raw.preVerificationGas),
    maxFeePerGas: BigInt(raw.maxFeePerGas),
    maxPriorityFeePerGas: BigInt(raw.maxPriorityFeePerGas),
    signature: (raw.signature ?? "0x") as Hex,
  };
  if (raw.factory) {
    op.factory = (/^0x7702/i.test(raw.factory) && raw.factory.length === 6 ? raw.factory : getAddress(raw.factory)) as Address;
    op.factoryData = (raw.factoryData ?? "0x") as Hex;
  }
  if (raw.paymaster) {
    op.paymaster = getAddress(raw.paymaster);
    op.paymasterData = (raw.paymasterData ?? "0x") as Hex;
  }
  const pvgl = big(raw.paymasterVerificationGasLimit);
  const ppogl = big(raw.paymasterPostOpGasLimit);
  if (pvgl !== undefined) op.paymasterVerificationGasLimit = pvgl;
  if (ppogl !== undefined) op.paymasterPostOpGasLimit = ppogl;
  if (raw.eip7702Auth) op.authorization = authorizationOf(raw.eip7702Auth);
  return op;
}

/** The op's initCode as v0.6 would carry it (v0.8: factory ++ factoryData; "0x" for none). */
export const initCodeOf = (v: VersionedUserOp): Hex =>
  v.version === "0.6" ? (v.op.initCode ?? "0x") : v.op.factory ? (`${v.op.factory}${(v.op.factoryData ?? "0x").slice(2)}` as Hex) : "0x";
