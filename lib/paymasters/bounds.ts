// What our paymaster agrees to sign for an operation a client built (ERC-7677): every gas field bounded by the
// service's own estimate of that op and by the chain's current fees. The bundler that lands a sponsored op is paid
// (preVerificationGas + gas used) × its effective tip from the paymaster's deposit, so an unbounded field is a drain.
import { envNumber } from "@/lib/config";
import { onChain } from "@/lib/chain/clients";
import type { ChainConfig } from "@/lib/chain/registry";
import { chainFees, DUMMY_SIGNATURE, estimateUserOperation, preVerificationGas, stubPaymasterAndData, type UserOp } from "@/lib/chain/userop";
import { ApiError } from "@/lib/http/errors";

/**
 * How far above the service's own estimate a client's gas limits may go, in percent: PAYMASTER_GAS_BOUND_PERCENT,
 * default 50. The estimate already carries the margins the service builds its own operations with (call gas +20%
 * +10k, verification +30% +10k plus a session key's validation), and the bound is on top of those.
 */
export const gasBoundPercent = () => BigInt(Math.floor(envNumber("PAYMASTER_GAS_BOUND_PERCENT", 50, { min: 0 })));

/**
 * Gas a client's callGasLimit and verificationGasLimit may have on top of that: PAYMASTER_GAS_BOUND_EXTRA, default
 * 100,000. Bundlers pad small estimates to floors of their own (alto gives every call at least 80,000), and v0.6
 * charges only the gas a call uses, so this costs at most the extra gas actually burnt; the cost cap still applies.
 */
export const gasBoundExtra = () => BigInt(Math.floor(envNumber("PAYMASTER_GAS_BOUND_EXTRA", 100_000, { min: 0 })));

/**
 * How many times the chain's current fees a client's maxFeePerGas and maxPriorityFeePerGas may be:
 * PAYMASTER_FEE_BOUND_FACTOR, default 2. "Current" is what the service itself would pay: maxFeePerGas twice the
 * latest base fee plus the tip, the tip the node's suggestion +20%.
 */
export const feeBoundFactor = () => envNumber("PAYMASTER_FEE_BOUND_FACTOR", 2, { min: 1 });

export const GAS_FIELDS = ["callGasLimit", "verificationGasLimit", "preVerificationGas", "maxFeePerGas", "maxPriorityFeePerGas"] as const;
export type GasField = (typeof GAS_FIELDS)[number];
export type OperationBounds = Record<GasField, bigint>;

/** A client's gas field over its bound: a JSON-RPC invalid-params error whose data names the field and the bound. */
export class GasBoundError extends Error {
  constructor(
    readonly field: GasField,
    readonly value: bigint,
    readonly bound: bigint,
    readonly why: string,
  ) {
    super(`userOperation.${field} ${value} is over this paymaster's bound of ${bound} (${why}). Lower it, or estimate the operation again.`);
  }
}

const scaled = (value: bigint, percent: bigint) => (value * (100n + percent)) / 100n;
const times = (value: bigint, factor: number) => (value * BigInt(Math.round(factor * 1000))) / 1000n;

/**
 * The most this paymaster signs for each of `op`'s gas fields: the service estimates the same op itself (its
 * sender, initCode, callData and nonce key; simulated with our paymaster's stub, as for an intent) and reads the
 * chain's fees. Throws the estimate's own errors (an op that reverts or fails validation is not sponsored).
 */
export async function operationBounds(chain: ChainConfig, op: UserOp): Promise<OperationBounds> {
  const [fees, { op: estimated }] = await Promise.all([
    onChain(chain, () => chainFees(chain)),
    onChain(chain, () =>
      estimateUserOperation(chain, {
        sender: op.sender,
        initCode: op.initCode ?? "0x",
        callData: op.callData,
        nonceKey: op.nonce >> 64n,
        sponsored: true,
        // The client may sign with a session key: its validation costs more than the owner's, so allow it.
        signerKind: "sessionKey",
      }),
    ),
  ]);
  if ((op.initCode ?? "0x") !== "0x" && estimated.initCode === "0x") {
    throw new ApiError(400, "invalid_request_error", `The account ${op.sender} is already deployed: the operation's initCode must be empty (AA10).`);
  }
  const percent = gasBoundPercent();
  const extra = gasBoundExtra();
  const factor = feeBoundFactor();
  const pvg = preVerificationGas({ ...op, paymasterAndData: stubPaymasterAndData(0), signature: DUMMY_SIGNATURE });
  return {
    callGasLimit: scaled(estimated.callGasLimit, percent) + extra,
    verificationGasLimit: scaled(estimated.verificationGasLimit, percent) + extra,
    preVerificationGas: scaled(pvg, percent),
    maxFeePerGas: times(fees.maxFeePerGas, factor),
    maxPriorityFeePerGas: times(fees.maxPriorityFeePerGas, factor),
  };
}

/** Refuses the first gas field of `op` over its bound. */
export function checkBounds(op: UserOp, bounds: OperationBounds): void {
  const percent = gasBoundPercent();
  const extra = gasBoundExtra();
  const factor = feeBoundFactor();
  const why: Record<GasField, string> = {
    callGasLimit: `the service's estimate of the call, with its margin, +${percent}% +${extra}`,
    verificationGasLimit: `the service's estimate of validation (deployment, a session key's checks and the paymaster), with its margin, +${percent}% +${extra}`,
    preVerificationGas: `the operation's calldata cost, +${percent}%`,
    maxFeePerGas: `${factor} × the chain's current max fee per gas`,
    maxPriorityFeePerGas: `${factor} × the chain's current priority fee`,
  };
  for (const field of GAS_FIELDS) {
    if (op[field] > bounds[field]) throw new GasBoundError(field, op[field], bounds[field], why[field]);
  }
}
