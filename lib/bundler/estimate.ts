// eth_estimateUserOperationGas (v0.6 and v0.8) and the fee methods: the service's own estimation (lib/chain/userop) and fees (chainFees).
import { toHex, type Hex } from "viem";
import { onChain } from "@/lib/chain/clients";
import type { ChainConfig } from "@/lib/chain/registry";
import { chainFees, estimateUserOperation, estimateUserOperationV08, isEip7702Factory, paymasterPays, paymasterPaysV08, type UserOpV08 } from "@/lib/chain/userop";
import type { Db } from "@/lib/db/client";
import { checkDelegation } from "@/lib/paymasters/senders";
import type { ProjectContext } from "@/lib/tenant";
import { entryPointOf, estimableOperation, positional } from "./params";
import { projectSender } from "./sender";

export interface GasEstimate {
  preVerificationGas: Hex;
  verificationGasLimit: Hex;
  callGasLimit: Hex;
  /** v0.8 ops with a paymaster: its two limits. */
  paymasterVerificationGasLimit?: Hex;
  paymasterPostOpGasLimit?: Hex;
}

/**
 * The op's gas as the service estimates its own operations (call gas by eth_estimateGas, validation by simulation,
 * preVerificationGas by the calldata formula, each with the service's margins), with the client's paymaster stub
 * (v0.6 paymasterAndData; v0.8 paymaster and paymasterData) in the simulation when it names a paymaster. The nonce's
 * key is the client's; gas fields, signature and a third (state override) parameter are not used. A v0.8 EIP-7702 op's
 * eip7702Auth (its signature may still be a stub) is estimated as if the delegation were in place.
 */
export async function estimateUserOperationGas(db: Db, ctx: ProjectContext, chain: ChainConfig, params: unknown): Promise<GasEstimate> {
  const [rawOp, rawEntryPoint] = positional(params, 2, "userOperation, entryPoint");
  const { version } = entryPointOf(chain, rawEntryPoint);
  const versioned = estimableOperation(rawOp, version);
  const sender = await projectSender(db, ctx, chain.chainId, versioned.op.sender, version);
  if (versioned.version === "0.8") return estimateV08(chain, versioned.op, sender.accountType);
  const op = versioned.op;
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

async function estimateV08(chain: ChainConfig, op: UserOpV08, accountType: string): Promise<GasEstimate> {
  await checkDelegation(chain, op, accountType);
  const delegates = isEip7702Factory(op.factory);
  const sponsored = paymasterPaysV08(op);
  const { op: estimated } = await onChain(chain, () =>
    estimateUserOperationV08(chain, {
      sender: op.sender,
      ...(delegates ? (op.authorization ? { authorization: op.authorization } : {}) : { factory: op.factory, factoryData: op.factoryData }),
      callData: op.callData,
      nonceKey: op.nonce >> 64n,
      ...(sponsored && {
        paymasterStub: async () => ({ paymaster: op.paymaster!, paymasterData: op.paymasterData ?? "0x", paymasterPostOpGasLimit: op.paymasterPostOpGasLimit ?? 0n }),
      }),
    }),
  );
  return {
    preVerificationGas: toHex(estimated.preVerificationGas),
    verificationGasLimit: toHex(estimated.verificationGasLimit),
    callGasLimit: toHex(estimated.callGasLimit),
    ...(sponsored && {
      paymasterVerificationGasLimit: toHex(estimated.paymasterVerificationGasLimit ?? 0n),
      paymasterPostOpGasLimit: toHex(estimated.paymasterPostOpGasLimit ?? 0n),
    }),
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
