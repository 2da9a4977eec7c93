// An intent's user operation of either EntryPoint version: stored (the transaction_intents.userOperation JSON), hashed,
// signed and read back. v0.6 rows keep the shape they always had; a v0.8 op is stored in the v0.8 RPC shape
// (ERC-7769: factory/paymaster fields unpacked, eip7702Auth) marked with entryPointVersion "0.8".
import {
  getAddress,
  hexToBigInt,
  isAddressEqual,
  recoverAddress,
  slice,
  recoverMessageAddress,
  toHex,
  type Address,
  type Hex,
  type LocalAccount,
  type SignedAuthorization,
} from "viem";
import { getUserOperationTypedData } from "viem/account-abstraction";
import { entryPointOf, serviceDeployment } from "@/lib/chain/contracts";
import type { ChainConfig } from "@/lib/chain/registry";
import {
  paymasterPays,
  paymasterPaysV08,
  requiredPrefund,
  requiredPrefundV08,
  signUserOperation,
  signUserOperationV08,
  userOperationHash,
  userOperationHashV08,
  type UserOp,
  type UserOpV08,
} from "@/lib/chain/userop";
import type { SignatureFacts } from "@/lib/sponsorship/signatures";
import { deserializeUserOp, serializeUserOp } from "./userop-json";

export type VersionedOp = { version: "0.6"; op: UserOp } | { version: "0.8"; op: UserOpV08 };

/** What the userOperation column holds: hex strings, and a v0.8 op's eip7702Auth object. */
export type StoredOp = Record<string, string>;

const ZERO32: Hex = `0x${"0".repeat(64)}`;

/** Whether a stored op is an EntryPoint v0.8 one. */
export const isStoredV08 = (stored: Record<string, unknown>) => stored.entryPointVersion === "0.8";

/**
 * An EIP-7702 authorization the op carries whose owner has not signed it yet (owner-held delegated account: the
 * intent waits for `signedAuthorization`). Its address is final (it is what the op's hash binds), its signature zero.
 */
export const isUnsignedAuthorization = (authorization: SignedAuthorization | undefined) => !!authorization && BigInt(authorization.r) === 0n && BigInt(authorization.s) === 0n;

export function unsignedAuthorization(implementation: Address, chainId: number, nonce: number): SignedAuthorization {
  return { address: implementation, chainId, nonce, r: ZERO32, s: ZERO32, yParity: 0 };
}

const optionalHex = (value: bigint | undefined) => (value === undefined ? undefined : toHex(value));

/** A v0.8 op as the column stores it (and the API shows it): the v0.8 RPC shape, entryPointVersion "0.8". */
export function serializeUserOpV08(op: UserOpV08): StoredOp {
  const auth = op.authorization;
  const stored: Record<string, unknown> = {
    entryPointVersion: "0.8",
    sender: op.sender,
    nonce: toHex(op.nonce),
    factory: op.factory,
    factoryData: op.factoryData,
    callData: op.callData,
    callGasLimit: toHex(op.callGasLimit),
    verificationGasLimit: toHex(op.verificationGasLimit),
    preVerificationGas: toHex(op.preVerificationGas),
    maxFeePerGas: toHex(op.maxFeePerGas),
    maxPriorityFeePerGas: toHex(op.maxPriorityFeePerGas),
    paymaster: op.paymaster,
    paymasterVerificationGasLimit: optionalHex(op.paymasterVerificationGasLimit),
    paymasterPostOpGasLimit: optionalHex(op.paymasterPostOpGasLimit),
    paymasterData: op.paymasterData,
    signature: op.signature,
    eip7702Auth: auth
      ? {
          address: getAddress(auth.address),
          chainId: toHex(auth.chainId),
          nonce: toHex(auth.nonce),
          r: auth.r,
          s: auth.s,
          yParity: toHex(auth.yParity ?? 0),
        }
      : undefined,
  };
  for (const key of Object.keys(stored)) if (stored[key] === undefined) delete stored[key];
  return stored as StoredOp;
}

export function deserializeUserOpV08(stored: Record<string, unknown>): UserOpV08 {
  const s = stored as Record<string, string | undefined>;
  const big = (value: string | undefined) => (value === undefined ? undefined : BigInt(value));
  const auth = stored.eip7702Auth as Record<string, string> | undefined;
  return {
    sender: s.sender as Address,
    nonce: BigInt(s.nonce!),
    ...(s.factory ? { factory: s.factory as Address, factoryData: (s.factoryData ?? "0x") as Hex } : {}),
    callData: s.callData as Hex,
    callGasLimit: BigInt(s.callGasLimit!),
    verificationGasLimit: BigInt(s.verificationGasLimit!),
    preVerificationGas: BigInt(s.preVerificationGas!),
    maxFeePerGas: BigInt(s.maxFeePerGas!),
    maxPriorityFeePerGas: BigInt(s.maxPriorityFeePerGas!),
    ...(s.paymaster
      ? {
          paymaster: s.paymaster as Address,
          paymasterData: (s.paymasterData ?? "0x") as Hex,
          paymasterVerificationGasLimit: big(s.paymasterVerificationGasLimit),
          paymasterPostOpGasLimit: big(s.paymasterPostOpGasLimit) ?? 0n,
        }
      : {}),
    signature: (s.signature ?? "0x") as Hex,
    ...(auth
      ? {
          authorization: {
            address: auth.address as Address,
            chainId: Number(auth.chainId),
            nonce: Number(auth.nonce),
            r: auth.r as Hex,
            s: auth.s as Hex,
            yParity: Number(auth.yParity ?? 0),
          },
        }
      : {}),
  };
}

export const storeOp = (v: VersionedOp): StoredOp => (v.version === "0.8" ? serializeUserOpV08(v.op) : serializeUserOp(v.op));

export const loadOp = (stored: Record<string, unknown>): VersionedOp =>
  isStoredV08(stored) ? { version: "0.8", op: deserializeUserOpV08(stored) } : { version: "0.6", op: deserializeUserOp(stored as Record<string, string>) };

export const hashOp = (chain: ChainConfig, v: VersionedOp): Hex => (v.version === "0.8" ? userOperationHashV08(chain, v.op) : userOperationHash(chain, v.op));

/** Whether the op deploys its account: v0.6 initCode; v0.8 a factory, or the EIP-7702 marker (it delegates the EOA). */
export const opDeploys = (v: VersionedOp): boolean => (v.version === "0.8" ? !!v.op.factory : (v.op.initCode ?? "0x") !== "0x");

/** The most the op can cost whoever pays for it (its version's prefund). */
export const opMaxCost = (v: VersionedOp): bigint => (v.version === "0.8" ? requiredPrefundV08(v.op) : requiredPrefund(v.op));

/** What a signature of our paymaster on an op binds: its EntryPoint and paymaster, and until when it may land (Unix seconds). */
export interface OurSponsorship {
  entryPoint: Address;
  paymaster: Address;
  validUntil: number;
}

/**
 * Our paymaster's sponsorship on the op, read from its paymaster fields (v0.6: paymaster ++ abi.encode(validUntil,
 * validAfter) ++ signature; v0.8: paymasterData = abi.encode(validUntil, validAfter) ++ signature); null when another
 * paymaster, or none, pays. validUntil 0 (no expiry, never signed by us) reads as the largest uint48.
 */
export function ourSponsorship(v: VersionedOp): OurSponsorship | null {
  const { paymaster: ours06, paymasterV08: ours08 } = serviceDeployment();
  let paymaster: Address;
  let window: Hex;
  if (v.version === "0.8") {
    if (!v.op.paymaster || !isAddressEqual(v.op.paymaster, ours08) || (v.op.paymasterData ?? "0x").length < 2 + 64) return null;
    paymaster = ours08;
    window = slice(v.op.paymasterData!, 0, 32);
  } else {
    const data = v.op.paymasterAndData ?? "0x";
    if (data.length < 2 + 2 * 52 || !isAddressEqual(slice(data, 0, 20), ours06)) return null;
    paymaster = ours06;
    window = slice(data, 20, 52);
  }
  const validUntil = Number(hexToBigInt(window));
  return { entryPoint: entryPointOf(v.version), paymaster, validUntil: validUntil === 0 ? 2 ** 48 - 1 : validUntil };
}

/** The record of our paymaster's signature on a sponsored op (its userOpHash `hash`); null when our paymaster does not pay for it. */
export function signatureFacts(chain: Pick<ChainConfig, "chainId">, v: VersionedOp, hash: Hex): SignatureFacts | null {
  const ours = ourSponsorship(v);
  if (!ours) return null;
  return { chainId: chain.chainId, ...ours, sender: v.op.sender, nonce: v.op.nonce, userOperationHash: hash, maxCost: opMaxCost(v) };
}

export const opSponsored = (v: VersionedOp): boolean => (v.version === "0.8" ? paymasterPaysV08(v.op) : paymasterPays(v.op.paymasterAndData));

/**
 * Signs the op as its account checks it: v0.6 an EIP-191 signature of the userOpHash; v0.8 (SmartAccountV8,
 * DelegatedAccountV8) a raw ECDSA signature of the userOpHash, itself the EIP-712 digest of the packed op.
 */
export async function signOp(chain: ChainConfig, v: VersionedOp, signer: LocalAccount): Promise<VersionedOp> {
  if (v.version === "0.8") return { version: "0.8", op: await signUserOperationV08(chain, v.op, signer) };
  return { version: "0.6", op: await signUserOperation(chain, v.op, signer) };
}

/** Who signed a stored op's hash under its version's scheme; null when the signature is malformed. */
export async function opSigner(stored: Record<string, unknown>, hash: Hex, signature: Hex = stored.signature as Hex): Promise<Address | null> {
  try {
    return isStoredV08(stored) ? await recoverAddress({ hash, signature }) : await recoverMessageAddress({ message: { raw: hash }, signature });
  } catch {
    return null;
  }
}

/** The EIP-712 typed data of a v0.8 op (PackedUserOperation in EntryPoint v0.8's domain), as JSON: what a wallet shows and signs. */
export function userOperationTypedDataJson(chain: Pick<ChainConfig, "chainId">, op: UserOpV08) {
  const typed = getUserOperationTypedData({ chainId: chain.chainId, entryPointAddress: serviceDeployment().entryPointV08, userOperation: { ...op, signature: "0x" } });
  return JSON.parse(JSON.stringify(typed, (_key, value) => (typeof value === "bigint" ? value.toString() : value))) as Record<string, unknown>;
}

