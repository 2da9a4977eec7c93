// The relayer's results: an op's receipt (from the EntryPoint's events), an op's relay outcome and a bundle's.
import type { Address, Hex, TransactionReceipt } from "viem";

export interface RelayedUserOperationReceipt {
  userOpHash: Hex;
  sender: Address;
  nonce: bigint;
  paymaster: Address;
  /** Whether the op's call succeeded (its gas is paid either way). */
  success: boolean;
  actualGasCost: bigint;
  actualGasUsed: bigint;
  transactionHash: Hex;
  blockNumber: bigint;
  /** The call's revert data (UserOperationRevertReason) when success is false. */
  revertData: Hex | null;
  /** revertData decoded, when success is false. */
  revertReason: string | null;
}

export interface RelayResult {
  userOpHash: Hex;
  transactionHash: Hex;
  /** The executor that sent the bundle; null through a bundler. */
  executor: Address | null;
  receipt: RelayedUserOperationReceipt;
  /** Ops in the bundle transaction (1 through a bundler). */
  bundleSize: number;
  /** The bundle transaction's receipt when the relayer awaited it (one object shared by the bundle's ops). */
  transaction?: TransactionReceipt;
}

export interface BundleResult {
  /** The bundle transaction (for ops that had already landed: the transaction that included the first of them). */
  transactionHash: Hex;
  executor: Address | null;
  blockNumber: bigint;
  /** The bundle transaction's gas. */
  gasUsed: bigint;
  /** One per included op, in bundle order. */
  included: RelayResult[];
  /** Ops left out, each with why (UserOperationRejectedError for a validation failure). */
  dropped: { userOpHash: Hex; error: Error }[];
}
