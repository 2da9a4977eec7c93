// The gas fields a sent op must have for a bundle to carry it and be paid for it, whichever its EntryPoint version.
import { onChain } from "@/lib/chain/clients";
import { latestBlock } from "@/lib/chain/coalesce";
import type { ChainConfig } from "@/lib/chain/registry";
import { invalidParams } from "./errors";

/** How far under the calldata formula a client's preVerificationGas may be: a stub's byte mix differs a little from the final data's. */
const PRE_VERIFICATION_TOLERANCE_PERCENT = 10n;

/**
 * Fees includable now, preVerificationGas covering the calldata (`calldataGas`, the version's formula; `covers` names
 * what it covers), and the version's gas total (`totalGas`) within a block.
 */
export async function checkGas(
  chain: ChainConfig,
  op: { maxFeePerGas: bigint; maxPriorityFeePerGas: bigint; preVerificationGas: bigint },
  { calldataGas, totalGas, covers = "the operation's calldata" }: { calldataGas: bigint; totalGas: bigint; covers?: string },
): Promise<void> {
  if (op.maxPriorityFeePerGas > op.maxFeePerGas) {
    throw invalidParams(`userOperation.maxPriorityFeePerGas ${op.maxPriorityFeePerGas} is over maxFeePerGas ${op.maxFeePerGas}.`, "userOperation.maxPriorityFeePerGas");
  }
  const block = await onChain(chain, () => latestBlock(chain));
  if (block.baseFeePerGas != null && op.maxFeePerGas < block.baseFeePerGas) {
    throw invalidParams(
      `userOperation.maxFeePerGas ${op.maxFeePerGas} is under the chain's base fee ${block.baseFeePerGas}: it could not be included. Ask pimlico_getUserOperationGasPrice for fees.`,
      "userOperation.maxFeePerGas",
    );
  }
  const required = (calldataGas * (100n - PRE_VERIFICATION_TOLERANCE_PERCENT)) / 100n;
  if (op.preVerificationGas < required) {
    throw invalidParams(
      `userOperation.preVerificationGas ${op.preVerificationGas} does not cover ${covers} (at least ${required}). Estimate it with eth_estimateUserOperationGas.`,
      "userOperation.preVerificationGas",
    );
  }
  if (totalGas > block.gasLimit) {
    throw invalidParams(`The operation's gas limits total ${totalGas}, over the chain's block gas limit ${block.gasLimit}.`, "userOperation.callGasLimit");
  }
}
