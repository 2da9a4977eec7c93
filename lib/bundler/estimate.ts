// eth_estimateUserOperationGas and the fee methods: the service's own estimation (lib/chain/userop) and fees (chainFees).
import { toHex, type Hex } from "viem";
import { onChain } from "@/lib/chain/clients";
import type { ChainConfig } from "@/lib/chain/registry";
import { chainFees, estimateUserOperation, paymasterPays } from "@/lib/chain/userop";
import type { Db } from "@/lib/db/client";
import type { ProjectContext } from "@/lib/projects/service";
import { entryPointOf, estimableOperation, positional } from "./params";
import { projectSender } from "./sender";

export interface GasEstimate {
  preVerificationGas: Hex;
  verificationGasLimit: Hex;
  callGasLimit: Hex;
}

/**
 * The op's gas as the service estimates its own operations (call gas by eth_estimateGas, validation by
 * simulateHandleOp, preVerificationGas by the calldata formula, each with the service's margins), with the client's
 * paymasterAndData (a paymaster's stub) in the simulation when it names a paymaster. The nonce's key is the client's;
 * gas fields, signature and a third (state override) parameter are not used.
 */
export async function estimateUserOperationGas(db: Db, ctx: ProjectContext, chain: ChainConfig, params: unknown): Promise<GasEstimate> {
  const [rawOp, rawEntryPoint] = positional(params, 2, "userOperation, entryPoint");
  entryPointOf(rawEntryPoint);
  const op = estimableOperation(rawOp);
  await projectSender(db, ctx, chain.chainId, op.sender);
  const sponsored = paymasterPays(op.paymasterAndData);
  const { op: estimated } = await onChain(chain, () =>
    estimateUserOperation(chain, {
      sender: op.sender,
      initCode: op.initCode ?? "0x",
      callData: op.callData,
      nonceKey: op.nonce >> 64n,
      sponsored,
      ...(sponsored && { paymasterStub: async () => op.paymasterAndData! }),
    }),
  );
  return {
    preVerificationGas: toHex(estimated.preVerificationGas),
    verificationGasLimit: toHex(estimated.verificationGasLimit),
    callGasLimit: toHex(estimated.callGasLimit),
  };
}

type FeeLevel = { maxFeePerGas: Hex; maxPriorityFeePerGas: Hex };

/**
 * pimlico_getUserOperationGasPrice: slow is what the service pays for its own operations (twice the base fee plus the
 * node's tip +20%), standard and fast 10% and 20% above; all within the bounds its paymaster signs for.
 */
export async function userOperationGasPrice(chain: ChainConfig): Promise<{ slow: FeeLevel; standard: FeeLevel; fast: FeeLevel }> {
  const fees = await onChain(chain, () => chainFees(chain));
  const at = (percent: bigint): FeeLevel => ({
    maxFeePerGas: toHex((fees.maxFeePerGas * percent) / 100n),
    maxPriorityFeePerGas: toHex((fees.maxPriorityFeePerGas * percent) / 100n),
  });
  return { slow: at(100n), standard: at(110n), fast: at(120n) };
}

/** rundler_maxPriorityFeePerGas: the standard tip. */
export async function maxPriorityFeePerGas(chain: ChainConfig): Promise<Hex> {
  return (await userOperationGasPrice(chain)).standard.maxPriorityFeePerGas;
}
