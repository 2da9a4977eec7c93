// User operations for EntryPoint v0.8: viem's unpacked shape (factory/paymaster fields, EIP-7702 `authorization`),
// packing for handleOps, the EIP-712 userOp hash and its signature, the prefund and preVerificationGas.
import { encodeAbiParameters, hexToBytes, toHex, type Address, type Hex, type LocalAccount } from "viem";
import {
  getUserOperationHash,
  getUserOperationTypedData,
  toPackedUserOperation,
  type PackedUserOperation,
  type UserOperation,
} from "viem/account-abstraction";
import { serviceDeployment } from "@/lib/chain/contracts";
import type { ChainConfig } from "@/lib/chain/registry";

/**
 * A user operation for EntryPoint v0.8, as viem types it. A deployed account leaves `factory` unset; an EIP-7702
 * account's first operation carries its owner's signed `authorization` (relayed as `eip7702Auth`, sent in the bundle's
 * type-4 transaction) and `factory: "0x7702"`, the marker that binds the delegate into the hash.
 */
export type UserOpV08 = UserOperation<"0.8">;

/** The initCode marker of an EIP-7702 account (EntryPoint v0.8's Eip7702Support): its hash uses the sender's delegate. */
export const EIP7702_FACTORY = "0x7702" as const;

export const isEip7702Factory = (factory: Hex | undefined) =>
  !!factory && /^0x7702(0{36})?$/i.test(factory);

/** The op as EntryPoint v0.8's PackedUserOperation (handleOps' argument): viem's packing. */
export function toPackedOp(op: UserOpV08): PackedUserOperation {
  return toPackedUserOperation(op);
}

/**
 * The userOp hash for EntryPoint v0.8 on `chain` (EIP-712 over the packed op). With the 7702 marker, the EntryPoint
 * hashes the sender's delegate in place of the initCode's first 20 bytes: the op's `authorization.address` (viem),
 * or, for an op re-sending the marker without an authorization, `delegate` (the sender's current delegate, read
 * from its code by the caller).
 */
export function userOperationHashV08(chain: ChainConfig, op: UserOpV08, delegate?: Address): Hex {
  let userOperation = op;
  if (isEip7702Factory(op.factory) && !op.authorization) {
    if (!delegate) throw new Error("An op with the EIP-7702 initCode marker and no authorization needs the sender's delegate to be hashed");
    // viem reads only the authorization's address for the hash.
    userOperation = { ...op, authorization: { address: delegate, chainId: 0, nonce: 0, r: "0x0", s: "0x0", yParity: 0 } };
  }
  return getUserOperationHash({
    userOperation,
    entryPointAddress: serviceDeployment().entryPointV08,
    entryPointVersion: "0.8",
    chainId: chain.chainId,
  });
}

/**
 * How an account checks the signature of a v0.8 op: "typedData" (the raw EIP-712 userOp hash, ECDSA.recover(userOpHash):
 * Simple7702Account, viem's toSimple7702SmartAccount) or "personalSign" (an EIP-191 signature of the hash, as our v0.6
 * SmartAccount checks it).
 */
export type SignatureScheme = "typedData" | "personalSign";

/**
 * Signs a v0.8 op with `signer` under the account's scheme (default "typedData": the raw digest when the signer can
 * sign hashes, else its EIP-712 typed data, which has the same digest). `delegate` as for userOperationHashV08.
 */
export async function signUserOperationV08(
  chain: ChainConfig,
  op: UserOpV08,
  signer: LocalAccount,
  options: { scheme?: SignatureScheme; delegate?: Address } = {},
): Promise<UserOpV08> {
  const hash = userOperationHashV08(chain, op, options.delegate);
  let signature: Hex;
  if (options.scheme === "personalSign") signature = await signer.signMessage({ message: { raw: hash } });
  else if (signer.sign) signature = await signer.sign({ hash });
  else {
    signature = await signer.signTypedData(
      getUserOperationTypedData({ chainId: chain.chainId, entryPointAddress: serviceDeployment().entryPointV08, userOperation: op }),
    );
  }
  return { ...op, signature };
}

/** Whether a paymaster pays for the op (otherwise the account does, from its EntryPoint deposit and balance). */
export const paymasterPaysV08 = (op: Pick<UserOpV08, "paymaster">) => !!op.paymaster && BigInt(op.paymaster) !== 0n;

/**
 * What EntryPoint v0.8 takes from the payer before execution (_getRequiredPrefund): every gas limit, the paymaster's
 * two included, at maxFeePerGas. No ×3 for a paymaster as in v0.6: its gas has limits of its own.
 */
export function requiredPrefundV08(
  op: Pick<
    UserOpV08,
    "callGasLimit" | "verificationGasLimit" | "preVerificationGas" | "maxFeePerGas" | "paymasterVerificationGasLimit" | "paymasterPostOpGasLimit"
  >,
): bigint {
  const gas =
    op.verificationGasLimit +
    op.callGasLimit +
    (op.paymasterVerificationGasLimit ?? 0n) +
    (op.paymasterPostOpGasLimit ?? 0n) +
    op.preVerificationGas;
  return gas * op.maxFeePerGas;
}

const packedTuple = {
  type: "tuple",
  components: [
    { name: "sender", type: "address" },
    { name: "nonce", type: "uint256" },
    { name: "initCode", type: "bytes" },
    { name: "callData", type: "bytes" },
    { name: "accountGasLimits", type: "bytes32" },
    { name: "preVerificationGas", type: "uint256" },
    { name: "gasFees", type: "bytes32" },
    { name: "paymasterAndData", type: "bytes" },
    { name: "signature", type: "bytes" },
  ],
} as const;

/** What a bundler's type-4 transaction pays per authorization it carries (EIP-7702 PER_EMPTY_ACCOUNT_COST). */
export const AUTHORIZATION_GAS = 25_000n;

/**
 * preVerificationGas for v0.8 as alto computes it: the v0.6 calldata formula over the packed op (signature as 65
 * non-zero bytes; 21000 for the transaction, 18300 per op, 4 per word), plus the 25000 a 7702 authorization adds
 * to the bundle transaction's intrinsic gas.
 */
export function preVerificationGasV08(op: UserOpV08): bigint {
  const packed = toPackedUserOperation({ ...op, signature: toHex(new Uint8Array(65).fill(1)) });
  const encoded = hexToBytes(encodeAbiParameters([packedTuple], [packed])).subarray(32, -32);
  let callDataCost = 0;
  for (const byte of encoded) callDataCost += byte === 0 ? 4 : 16;
  const base = BigInt(Math.round(callDataCost + 21_000 + 18_300 + (4 * (encoded.length + 31)) / 32));
  return base + (op.authorization ? AUTHORIZATION_GAS : 0n);
}
