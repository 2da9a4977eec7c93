// EntryPoint v0.8 simulation. v0.8 has no simulation methods on chain: as bundlers do (alto), the 0.8 package's
// EntryPointSimulations runs in an eth_call with its code put at the EntryPoint's address by a state override, so it
// sees the EntryPoint's storage (deposits, nonces) and its SenderCreator.
import {
  decodeErrorResult,
  decodeFunctionResult,
  encodeFunctionData,
  parseAbi,
  zeroAddress,
  type Address,
  type Hex,
  type StateOverride,
} from "viem";
import simulationsArtifact from "@account-abstraction/contracts-v08/artifacts/EntryPointSimulations.json";
import { entryPointV08Abi } from "@/contracts/artifacts";
import { publicClient } from "@/lib/chain/clients";
import { serviceDeployment } from "@/lib/chain/contracts";
import type { ChainConfig } from "@/lib/chain/registry";
import { toPackedOp, type UserOpV08 } from "./encoding-v08";
import { UserOperationRejectedError } from "./errors";
import { describeRevert, revertDataOf } from "./revert";

const simulationsAbi = parseAbi([
  "struct PackedUserOperation { address sender; uint256 nonce; bytes initCode; bytes callData; bytes32 accountGasLimits; uint256 preVerificationGas; bytes32 gasFees; bytes paymasterAndData; bytes signature; }",
  "struct ExecutionResult { uint256 preOpGas; uint256 paid; uint256 accountValidationData; uint256 paymasterValidationData; bool targetSuccess; bytes targetResult; }",
  "function simulateHandleOp(PackedUserOperation op, address target, bytes targetCallData) returns (ExecutionResult)",
]);

const simulationsCode = simulationsArtifact.deployedBytecode as Hex;

export interface ValidationData {
  /** The signature (or the paymaster's) failed: validateUserOp returned SIG_VALIDATION_FAILED. */
  sigFailed: boolean;
  /** An aggregator the account names (address(0) none, address(1) sigFailed). */
  aggregator: Address;
  /** Unix seconds; 0: no expiry. */
  validUntil: number;
  validAfter: number;
}

/** ERC-4337 validationData: aggregator or sigFailed (low 160 bits), validUntil (48), validAfter (48). */
export function parseValidationData(data: bigint): ValidationData {
  const aggregator = data & ((1n << 160n) - 1n);
  return {
    sigFailed: aggregator === 1n,
    aggregator: `0x${aggregator.toString(16).padStart(40, "0")}` as Address,
    validUntil: Number((data >> 160n) & ((1n << 48n) - 1n)),
    validAfter: Number(data >> 208n),
  };
}

export interface ExecutionResultV08 {
  /** Gas of validation (deployment or 7702 initialization, the account's and the paymaster's) plus preVerificationGas. */
  preOpGas: bigint;
  /** What the op paid: actual gas (with v0.8's 10% penalty on unused execution gas) times the op's gas price. */
  paid: bigint;
  account: ValidationData;
  paymaster: ValidationData;
  targetSuccess: boolean;
  targetResult: Hex;
}

/**
 * EntryPointSimulations.simulateHandleOp(op, target, targetCallData) for EntryPoint v0.8: validation and execution of
 * the op (signatures are not enforced: a failed one shows as sigFailed), then the optional target call. A FailedOp
 * (or FailedOpWithRevert) is a UserOperationRejectedError ("AAxx …"). `stateOverride` is merged with the EntryPoint's.
 */
export async function simulateHandleOpV08(
  chain: ChainConfig,
  op: UserOpV08,
  stateOverride: StateOverride = [],
  target: { address: Address; data: Hex } = { address: zeroAddress, data: "0x" },
): Promise<ExecutionResultV08> {
  const { entryPointV08 } = serviceDeployment();
  const data = encodeFunctionData({ abi: simulationsAbi, functionName: "simulateHandleOp", args: [toPackedOp(op), target.address, target.data] });
  let returned: Hex | undefined;
  try {
    ({ data: returned } = await publicClient(chain).call({
      to: entryPointV08,
      data,
      stateOverride: [{ address: entryPointV08, code: simulationsCode }, ...stateOverride.filter((s) => s.address.toLowerCase() !== entryPointV08.toLowerCase())],
    }));
  } catch (err) {
    const revert = revertDataOf(err);
    if (revert === undefined) throw err;
    throw rejection(revert, "simulation");
  }
  if (!returned || returned === "0x") throw new Error("EntryPointSimulations.simulateHandleOp returned nothing");
  const result = decodeFunctionResult({ abi: simulationsAbi, functionName: "simulateHandleOp", data: returned });
  return {
    preOpGas: result.preOpGas,
    paid: result.paid,
    account: parseValidationData(result.accountValidationData),
    paymaster: parseValidationData(result.paymasterValidationData),
    targetSuccess: result.targetSuccess,
    targetResult: result.targetResult,
  };
}

/** FailedOp / FailedOpWithRevert of EntryPoint v0.8 as the op's index and "AAxx …" reason (with the inner revert), or null. */
export function failedOpV08(revert: Hex | undefined): { index: number; reason: string } | null {
  if (!revert) return null;
  try {
    const decoded = decodeErrorResult({ abi: entryPointV08Abi, data: revert });
    if (decoded.errorName === "FailedOp") return { index: Number(decoded.args[0]), reason: decoded.args[1] };
    if (decoded.errorName === "FailedOpWithRevert") {
      const [index, reason, inner] = decoded.args;
      return { index: Number(index), reason: `${reason}: ${describeRevert(inner)}` };
    }
  } catch {
    // not the EntryPoint's
  }
  return null;
}

/** A revert of EntryPoint v0.8 (or of its simulation) as the error a caller gets. */
export function rejection(revert: Hex, what: string): UserOperationRejectedError {
  const failed = failedOpV08(revert);
  if (failed) return new UserOperationRejectedError(failed.reason, failed.index);
  return new UserOperationRejectedError(`${what} reverted: ${describeRevert(revert)}`);
}
