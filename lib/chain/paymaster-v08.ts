// VerifyingPaymasterV8 (EntryPoint v0.8): its getHash computed off-chain and the paymasterData it reads.
import { concat, encodeAbiParameters, keccak256, pad, toHex, type Address, type Hex } from "viem";
import type { UserOperation } from "viem/account-abstraction";

export interface SponsorshipWindowV08 {
  /** Unix seconds; 0 means no expiry. */
  validUntil: number;
  /** Unix seconds; 0 means valid at once. */
  validAfter: number;
}

/** The op fields VerifyingPaymasterV8.getHash reads (paymasterData and both signatures are not among them). */
export type SponsoredOpV08 = Pick<
  UserOperation<"0.8">,
  | "sender"
  | "nonce"
  | "factory"
  | "factoryData"
  | "authorization"
  | "callData"
  | "callGasLimit"
  | "verificationGasLimit"
  | "preVerificationGas"
  | "maxFeePerGas"
  | "maxPriorityFeePerGas"
  | "paymasterVerificationGasLimit"
  | "paymasterPostOpGasLimit"
>;

const EIP7702_MARKER = /^0x7702(0{36})?$/i;
const uint128 = (value: bigint | undefined) => pad(toHex(value ?? 0n), { size: 16 });

/**
 * The initCode hash as EntryPoint v0.8 (and the paymaster) hash it: keccak256(factory ++ factoryData), or for an
 * EIP-7702 op (factory = the 0x7702 marker) keccak256(delegate ++ factoryData), the delegate being the op's
 * authorization address or, without one, `delegate` (the sender's current delegation).
 */
export function initCodeHashV08(op: Pick<SponsoredOpV08, "factory" | "factoryData" | "authorization">, delegate?: Address): Hex {
  if (op.factory && EIP7702_MARKER.test(op.factory)) {
    const target = op.authorization?.address ?? delegate;
    if (!target) throw new Error("An EIP-7702 op (factory 0x7702) needs its authorization or the sender's delegate to be hashed");
    return keccak256(concat([target, op.factoryData ?? "0x"]));
  }
  return keccak256(op.factory ? concat([op.factory, op.factoryData ?? "0x"]) : "0x");
}

/** VerifyingPaymasterV8.getHash(op, validUntil, validAfter) on `chainId` for the paymaster at `paymaster`. */
export function paymasterHashV08(chainId: number, paymaster: Address, op: SponsoredOpV08, window: SponsorshipWindowV08, delegate?: Address): Hex {
  return keccak256(
    encodeAbiParameters(
      [
        { type: "address" },
        { type: "uint256" },
        { type: "bytes32" },
        { type: "bytes32" },
        { type: "bytes32" },
        { type: "bytes32" },
        { type: "uint256" },
        { type: "bytes32" },
        { type: "uint256" },
        { type: "address" },
        { type: "uint48" },
        { type: "uint48" },
      ],
      [
        op.sender,
        op.nonce,
        initCodeHashV08(op, delegate),
        keccak256(op.callData),
        concat([uint128(op.verificationGasLimit), uint128(op.callGasLimit)]),
        concat([uint128(op.paymasterVerificationGasLimit), uint128(op.paymasterPostOpGasLimit)]),
        op.preVerificationGas,
        concat([uint128(op.maxPriorityFeePerGas), uint128(op.maxFeePerGas)]),
        BigInt(chainId),
        paymaster,
        window.validUntil,
        window.validAfter,
      ],
    ),
  );
}

/** The op's `paymasterData` for VerifyingPaymasterV8: abi.encode(uint48 validUntil, uint48 validAfter) ++ the 65-byte signature. */
export const paymasterDataV08 = (window: SponsorshipWindowV08, signature: Hex): Hex =>
  concat([encodeAbiParameters([{ type: "uint48" }, { type: "uint48" }], [window.validUntil, window.validAfter]), signature]);

/**
 * A paymasterData of the right length whose signature fails yet goes through ecrecover like a real one (the shape of
 * viem's stub account signature), for gas estimation before the real one is signed.
 */
export const STUB_PAYMASTER_SIGNATURE_V08: Hex =
  "0xfffffffffffffffffffffffffffffff0000000000000000000000000000000007aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa1c";

export const stubPaymasterDataV08 = (window: SponsorshipWindowV08): Hex => paymasterDataV08(window, STUB_PAYMASTER_SIGNATURE_V08);
