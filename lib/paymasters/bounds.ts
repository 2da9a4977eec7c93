// What our paymaster agrees to sign for an operation a client built (ERC-7677): every gas field bounded by the
// service's own estimate of that op and by the chain's current fees. The bundler that lands a sponsored op is paid
// (preVerificationGas + gas used) × its effective tip from the paymaster's deposit, so an unbounded field is a drain.
import { envNumber } from "@/lib/config";
import { onChain } from "@/lib/chain/clients";
import type { ChainConfig } from "@/lib/chain/registry";
import {
  chainFees,
  DUMMY_SIGNATURE,
  estimateUserOperation,
  estimateUserOperationV08,
  isEip7702Factory,
  PAYMASTER_POST_OP_GAS_V08,
  preVerificationGas,
  preVerificationGasV08,
  stubPaymasterAndData,
  stubPaymasterV08,
  type UserOp,
  type UserOpV08,
} from "@/lib/chain/userop";
import { badRequest } from "@/lib/errors";

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
/** v0.8 ops carry the paymaster's own two limits too: both count in the prefund, so both are bounded. */
export const GAS_FIELDS_V08 = [...GAS_FIELDS, "paymasterVerificationGasLimit", "paymasterPostOpGasLimit"] as const;
export type GasField = (typeof GAS_FIELDS_V08)[number];
/**
 * The most each gas field may be, and the least maxFeePerGas may be: the chain's current base fee. An op offering less
 * cannot be included now, and a signature for it would hold next to nothing (its most cost is its gas × maxFeePerGas)
 * while it may land once fees fall: the floor keeps what is held for a signature the most it can cost.
 */
export type OperationBounds = Record<(typeof GAS_FIELDS)[number], bigint> & { maxFeePerGasFloor: bigint };
export type OperationBoundsV08 = Record<GasField, bigint> & { maxFeePerGasFloor: bigint };

/** A client's gas field over its bound (or maxFeePerGas under its floor): a JSON-RPC invalid-params error whose data names the field and the bound. */
export class GasBoundError extends Error {
  constructor(
    readonly field: GasField,
    readonly value: bigint,
    readonly bound: bigint,
    readonly why: string,
    readonly below = false,
  ) {
    super(
      below
        ? `userOperation.${field} ${value} is under this paymaster's floor of ${bound} (${why}). Raise it to the chain's current fees (estimate them again).`
        : `userOperation.${field} ${value} is over this paymaster's bound of ${bound} (${why}). Lower it, or estimate the operation again.`,
    );
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
    throw badRequest(`The account ${op.sender} is already deployed: the operation's initCode must be empty (AA10).`);
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
    maxFeePerGasFloor: fees.baseFee ?? 0n,
  };
}

/** Refuses the first gas field of `op` over its bound. */
export function checkBounds(op: UserOp, bounds: OperationBounds): void {
  checkFields(GAS_FIELDS, op, bounds);
}

function checkFields<F extends GasField>(fields: readonly F[], op: Partial<Record<F, bigint>>, bounds: Record<F, bigint> & { maxFeePerGasFloor: bigint }): void {
  const percent = gasBoundPercent();
  const extra = gasBoundExtra();
  const factor = feeBoundFactor();
  const why: Record<GasField, string> = {
    callGasLimit: `the service's estimate of the call, with its margin, +${percent}% +${extra}`,
    verificationGasLimit: `the service's estimate of validation (deployment, a session key's checks and the paymaster), with its margin, +${percent}% +${extra}`,
    preVerificationGas: `the operation's calldata cost, +${percent}%`,
    maxFeePerGas: `${factor} × the chain's current max fee per gas`,
    maxPriorityFeePerGas: `${factor} × the chain's current priority fee`,
    paymasterVerificationGasLimit: `the service's estimate of its paymaster's validation, with its margin, +${percent}% +${extra}`,
    paymasterPostOpGasLimit: "this paymaster has no postOp: its limit would only raise the operation's prefund and v0.8's penalty on unused gas",
  };
  for (const field of fields) {
    const value = op[field] ?? 0n;
    if (value > bounds[field]) throw new GasBoundError(field, value, bounds[field], why[field]);
  }
  const fee = (op as Partial<Record<GasField, bigint>>).maxFeePerGas ?? 0n;
  if (fee < bounds.maxFeePerGasFloor) throw new GasBoundError("maxFeePerGas", fee, bounds.maxFeePerGasFloor, "the chain's current base fee", true);
}

/**
 * The v0.8 counterpart of operationBounds: the service estimates the same op (its sender, factory or EIP-7702
 * authorization, callData and nonce key; with our VerifyingPaymasterV8's stub) and reads the chain's fees. `estimate`
 * is the paymaster verification gas the service itself would set, for an op that does not name it yet. The postOp
 * limit is bounded at 0: VerifyingPaymasterV8 has no postOp.
 */
export async function operationBoundsV08(chain: ChainConfig, op: UserOpV08): Promise<{ bounds: OperationBoundsV08; paymasterVerificationGasLimit: bigint }> {
  const delegates = isEip7702Factory(op.factory);
  const [fees, { op: estimated }] = await Promise.all([
    onChain(chain, () => chainFees(chain)),
    onChain(chain, () =>
      estimateUserOperationV08(chain, {
        sender: op.sender,
        ...(delegates ? (op.authorization ? { authorization: op.authorization } : {}) : { factory: op.factory, factoryData: op.factoryData }),
        callData: op.callData,
        nonceKey: op.nonce >> 64n,
        sponsored: true,
        // The client may sign with a session key: its validation costs more than the owner's, so allow it.
        signerKind: "sessionKey",
      }),
    ),
  ]);
  if (op.factory && !delegates && !estimated.factory) {
    throw badRequest(`The account ${op.sender} is already deployed: the operation must not name a factory (AA10).`);
  }
  const percent = gasBoundPercent();
  const extra = gasBoundExtra();
  const factor = feeBoundFactor();
  const stub = await stubPaymasterV08(chain);
  const pvg = preVerificationGasV08({ ...op, ...stub, paymasterVerificationGasLimit: estimated.paymasterVerificationGasLimit ?? 0n, signature: DUMMY_SIGNATURE });
  const paymasterVerificationGasLimit = estimated.paymasterVerificationGasLimit ?? 0n;
  return {
    bounds: {
      callGasLimit: scaled(estimated.callGasLimit, percent) + extra,
      verificationGasLimit: scaled(estimated.verificationGasLimit, percent) + extra,
      preVerificationGas: scaled(pvg, percent),
      maxFeePerGas: times(fees.maxFeePerGas, factor),
      maxPriorityFeePerGas: times(fees.maxPriorityFeePerGas, factor),
      paymasterVerificationGasLimit: scaled(paymasterVerificationGasLimit, percent) + extra,
      paymasterPostOpGasLimit: PAYMASTER_POST_OP_GAS_V08,
      maxFeePerGasFloor: fees.baseFee ?? 0n,
    },
    paymasterVerificationGasLimit,
  };
}

/** Refuses the first gas field of a v0.8 `op` over its bound (its paymaster limits included). */
export function checkBoundsV08(op: UserOpV08, bounds: OperationBoundsV08): void {
  checkFields(GAS_FIELDS_V08, op, bounds);
}
