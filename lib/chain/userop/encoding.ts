// The user operation's shape and encoding: account callData, the EntryPoint struct, the userOp hash and its signature.
import { decodeFunctionData, encodeFunctionData, type Address, type Hex, type LocalAccount } from "viem";
import { getUserOperationHash, type UserOperation } from "viem/account-abstraction";
import { smartAccountAbi } from "@/contracts/artifacts";
import { serviceDeployment } from "@/lib/chain/contracts";
import type { ChainConfig } from "@/lib/chain/registry";

/** A user operation for EntryPoint v0.6, as viem types it (`initCode` and `paymasterAndData` always set here). */
export type UserOp = UserOperation<"0.6">;

export interface AccountCall {
  to: Address;
  value: bigint;
  data: Hex;
}

/** The account's callData for `calls`: `execute` for one call, `executeBatch` for several. */
export function encodeAccountCalls(calls: AccountCall[]): Hex {
  if (calls.length === 0) throw new Error("encodeAccountCalls: no calls");
  if (calls.length === 1) {
    const [call] = calls as [AccountCall];
    return encodeFunctionData({ abi: smartAccountAbi, functionName: "execute", args: [call.to, call.value, call.data] });
  }
  return encodeFunctionData({
    abi: smartAccountAbi,
    functionName: "executeBatch",
    args: [calls.map((c) => c.to), calls.map((c) => c.value), calls.map((c) => c.data)],
  });
}

/** The ETH an `execute`/`executeBatch` callData sends from the account (0 for other calls). */
export function callValue(callData: Hex): bigint {
  try {
    const call = decodeFunctionData({ abi: smartAccountAbi, data: callData });
    if (call.functionName === "execute") return call.args[1];
    if (call.functionName === "executeBatch") return call.args[1].reduce((sum, v) => sum + v, 0n);
  } catch {
    // not an execute call
  }
  return 0n;
}

/** The op as EntryPoint v0.6's `UserOperation` struct. */
export function toEntryPointOp(op: UserOp) {
  return {
    sender: op.sender,
    nonce: op.nonce,
    initCode: op.initCode ?? "0x",
    callData: op.callData,
    callGasLimit: op.callGasLimit,
    verificationGasLimit: op.verificationGasLimit,
    preVerificationGas: op.preVerificationGas,
    maxFeePerGas: op.maxFeePerGas,
    maxPriorityFeePerGas: op.maxPriorityFeePerGas,
    paymasterAndData: op.paymasterAndData ?? "0x",
    signature: op.signature,
  } as const;
}

export const userOpTuple = {
  type: "tuple",
  components: [
    { name: "sender", type: "address" },
    { name: "nonce", type: "uint256" },
    { name: "initCode", type: "bytes" },
    { name: "callData", type: "bytes" },
    { name: "callGasLimit", type: "uint256" },
    { name: "verificationGasLimit", type: "uint256" },
    { name: "preVerificationGas", type: "uint256" },
    { name: "maxFeePerGas", type: "uint256" },
    { name: "maxPriorityFeePerGas", type: "uint256" },
    { name: "paymasterAndData", type: "bytes" },
    { name: "signature", type: "bytes" },
  ],
} as const;

/** The userOp hash the account's owner signs (personal_sign of it), for EntryPoint v0.6 on `chain`. */
export function userOperationHash(chain: ChainConfig, op: UserOp): Hex {
  return getUserOperationHash({
    userOperation: toEntryPointOp(op),
    entryPointAddress: serviceDeployment().entryPoint,
    entryPointVersion: "0.6",
    chainId: chain.chainId,
  });
}

/** Signs the op as a wallet's personal_sign of the raw userOp hash (owner, session key or guardian key). */
export async function signUserOperation(chain: ChainConfig, op: UserOp, signer: LocalAccount): Promise<UserOp> {
  return { ...op, signature: await signer.signMessage({ message: { raw: userOperationHash(chain, op) } }) };
}
