// A userOperation as stored in an intent's userOperation column (hex strings) and back.
import { toHex, type Address, type Hex } from "viem";
import type { UserOp } from "@/lib/chain/userop";

export const serializeUserOp = (op: UserOp): Record<string, string> => ({
  sender: op.sender,
  nonce: toHex(op.nonce),
  initCode: op.initCode ?? "0x",
  callData: op.callData,
  callGasLimit: toHex(op.callGasLimit),
  verificationGasLimit: toHex(op.verificationGasLimit),
  preVerificationGas: toHex(op.preVerificationGas),
  maxFeePerGas: toHex(op.maxFeePerGas),
  maxPriorityFeePerGas: toHex(op.maxPriorityFeePerGas),
  paymasterAndData: op.paymasterAndData ?? "0x",
  signature: op.signature,
});

export const deserializeUserOp = (op: Record<string, string>): UserOp => ({
  sender: op.sender as Address,
  nonce: BigInt(op.nonce!),
  initCode: op.initCode as Hex,
  callData: op.callData as Hex,
  callGasLimit: BigInt(op.callGasLimit!),
  verificationGasLimit: BigInt(op.verificationGasLimit!),
  preVerificationGas: BigInt(op.preVerificationGas!),
  maxFeePerGas: BigInt(op.maxFeePerGas!),
  maxPriorityFeePerGas: BigInt(op.maxPriorityFeePerGas!),
  paymasterAndData: op.paymasterAndData as Hex,
  signature: op.signature as Hex,
});
