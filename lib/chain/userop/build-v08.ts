// Building a user operation for EntryPoint v0.8: nonce, fees and gas limits (the paymaster's two included) found by
// simulation, for a deployed account, a factory account's first op, or an EIP-7702 account (its first op carrying the
// owner's signed authorization).
import {
  concat,
  decodeFunctionData,
  encodeFunctionData,
  isAddressEqual,
  keccak256,
  parseAbi,
  type Address,
  type Hex,
  type SignedAuthorization,
  type StateOverride,
} from "viem";
import { entryPointV08Abi, simple7702AccountAbi } from "@/contracts/artifacts";
import { publicClient } from "@/lib/chain/clients";
import { serviceDeployment } from "@/lib/chain/contracts";
import { delegateOfCode, delegationCode } from "@/lib/chain/eip7702";
import type { ChainConfig } from "@/lib/chain/registry";
import type { AccountCall } from "./encoding";
import { EIP7702_FACTORY, toPackedOp, paymasterPaysV08, preVerificationGasV08, requiredPrefundV08, type UserOpV08 } from "./encoding-v08";
import { CallRevertedError, InsufficientFundsError, UserOperationRejectedError } from "./errors";
import {
  calldataGas,
  chainFees,
  DUMMY_SIGNATURE,
  SIMULATION_VERIFICATION_GAS,
  VERIFICATION_GAS_MARGIN,
  withMargin,
} from "./gas";
import { describeRevert, revertDataOf } from "./revert";
import type { SponsorshipWindow } from "./paymaster";
import { sponsorUserOperationV08, stubPaymasterV08 } from "./paymaster-v08";
import { simulateHandleOpV08 } from "./simulate-v08";
import { counterfactualAccountStateV08 } from "./state-v08";

/** The paymaster fields of a v0.8 op (an ERC-7677 pm_getPaymasterStubData / pm_getPaymasterData answer has these). */
export interface PaymasterFieldsV08 {
  paymaster: Address;
  paymasterData: Hex;
  /** A floor for the limit (the paymaster's own estimate); the simulated figure is used when higher. */
  paymasterVerificationGasLimit?: bigint;
  /** The paymaster's postOp gas; 0 when it has none (its validation returns an empty context). */
  paymasterPostOpGasLimit?: bigint;
}

export interface BuildUserOperationV08Params {
  sender: Address;
  /** A factory account not deployed yet: its factory and factoryData (dropped once it has code). */
  factory?: Address;
  factoryData?: Hex;
  /**
   * An EIP-7702 account not yet delegating to `authorization.address`: the owner's signed authorization. The op gets
   * it and the 7702 initCode marker; gas is estimated as if the delegation were in place. Dropped when the EOA
   * already delegates there.
   */
  authorization?: SignedAuthorization;
  callData: Hex;
  /** The 2D nonce key (192 bits). Default 0. */
  nonceKey?: bigint;
  /** Our VerifyingPaymasterV8 pays; otherwise (and without paymasterStub) the account pays from its deposit and balance. */
  sponsored?: boolean;
  /** With `sponsored`, sign our sponsorship at once for this window; otherwise paymasterData is left a stub to sign with sponsorUserOperationV08. */
  sponsorship?: SponsorshipWindow;
  /**
   * Another paymaster's stub fields (final length, realistic bytes) for simulation, given the draft op (an ERC-7677
   * service's pm_getPaymasterStubData); with `sponsored`, our VerifyingPaymasterV8's stub by default.
   */
  paymasterStub?: (draft: UserOpV08) => Promise<PaymasterFieldsV08>;
  /** A session key's validation costs more gas than the owner's. Default "owner". */
  signerKind?: "owner" | "sessionKey";
  /**
   * State that makes an undeployed factory account look deployed (its code and storage), for estimating its call (our
   * AccountFactoryV8's accounts get theirs by default); without it, the call's gas of such an account is measured in
   * simulation, and a revert of its call is not seen.
   */
  accountState?: StateOverride;
}

export interface UserOperationEstimateV08 {
  /** Gas the account's validation used in simulation (deployment or 7702 initialization included). */
  validationGas: bigint;
  /** Gas the paymaster's validation used (0 without a paymaster). */
  paymasterValidationGas: bigint;
  /** The account call's gas (eth_estimateGas from the EntryPoint, less intrinsic gas; or measured in simulation). */
  callGas: bigint;
  /** The most the op can cost its payer: requiredPrefundV08(op). */
  maxCost: bigint;
  /** ETH the call sends from the account. */
  value: bigint;
}

/** Call gas margin for v0.8: lower than v0.6's, as v0.8 charges 10% of unused execution gas above 40k. */
export const CALL_GAS_MARGIN_V08 = { percent: 10n, fixed: 10_000n };
/** The paymaster's validation runs again on chain: its margin. */
export const PAYMASTER_GAS_MARGIN = { percent: 30n, fixed: 10_000n };

/** Calls as BaseAccount v0.8's execute(target, value, data) / executeBatch(Call[]) (Simple7702Account and ours). */
export function encodeAccountCallsV08(calls: AccountCall[]): Hex {
  if (calls.length === 0) throw new Error("encodeAccountCallsV08: no calls");
  if (calls.length === 1) {
    const [call] = calls as [AccountCall];
    return encodeFunctionData({ abi: simple7702AccountAbi, functionName: "execute", args: [call.to, call.value, call.data] });
  }
  return encodeFunctionData({
    abi: simple7702AccountAbi,
    functionName: "executeBatch",
    args: [calls.map((c) => ({ target: c.to, value: c.value, data: c.data }))],
  });
}

/** The ETH a BaseAccount v0.8 execute/executeBatch callData sends (0 for other calls). */
export function callValueV08(callData: Hex): bigint {
  try {
    const call = decodeFunctionData({ abi: simple7702AccountAbi, data: callData });
    if (call.functionName === "execute") return call.args[1];
    if (call.functionName === "executeBatch") return call.args[0].reduce((sum, c) => sum + c.value, 0n);
  } catch {
    // not an execute call
  }
  return 0n;
}

/** As sessionKeyVerificationGas (v0.6), counting executeBatch(Call[])'s targets. */
function sessionKeyVerificationGasV08(callData: Hex): bigint {
  let targets = 1n;
  try {
    const call = decodeFunctionData({ abi: simple7702AccountAbi, data: callData });
    if (call.functionName === "executeBatch") targets = BigInt(call.args[0].length);
  } catch {
    // not an account call: validation will refuse it anyway
  }
  return 50_000n + 2_500n * targets;
}

/** An unsigned v0.8 op with real gas figures (estimateUserOperationV08); its signature is "0x". */
export async function buildUserOperationV08(chain: ChainConfig, params: BuildUserOperationV08Params): Promise<UserOpV08> {
  return (await estimateUserOperationV08(chain, params)).op;
}

/**
 * Builds a v0.8 op and says how its gas was found:
 * - nonce: EntryPoint v0.8 getNonce(sender, nonceKey); fees: chainFees.
 * - callGasLimit: eth_estimateGas of the account call from the EntryPoint (a 7702 account's delegation, or
 *   `accountState`, put in place by a state override), less intrinsic gas, +10% +10k; a revert is a CallRevertedError.
 * - verificationGasLimit / paymasterVerificationGasLimit: EntryPointSimulations.simulateHandleOp with a dummy
 *   signature and the paymaster stub (the balance of an account that pays overridden so its prefund never fails):
 *   preOpGas − preVerificationGas, the paymaster's share from a second run without it; +30% +10k each.
 * - preVerificationGas: preVerificationGasV08 (25000 more with an authorization).
 * With `sponsored` and `sponsorship`, our paymaster's sponsorship is signed at the end (sponsorUserOperationV08).
 * An account that pays must hold the prefund its deposit does not cover plus the value it sends (InsufficientFundsError).
 */
export async function estimateUserOperationV08(
  chain: ChainConfig,
  params: BuildUserOperationV08Params,
): Promise<{ op: UserOpV08; estimate: UserOperationEstimateV08 }> {
  const client = publicClient(chain);
  const { entryPointV08: entryPoint } = serviceDeployment();
  const { sender, callData } = params;
  const nonceKey = params.nonceKey ?? 0n;
  if (nonceKey < 0n || nonceKey >= 1n << 192n) throw new UserOperationRejectedError("the nonce key must fit in 192 bits");

  const [nonce, fees, code, balance, deposit] = await Promise.all([
    client.readContract({ address: entryPoint, abi: entryPointV08Abi, functionName: "getNonce", args: [sender, nonceKey] }),
    chainFees(chain),
    client.getCode({ address: sender }),
    client.getBalance({ address: sender }),
    client.readContract({ address: entryPoint, abi: entryPointV08Abi, functionName: "balanceOf", args: [sender] }),
  ]);
  const hasCode = code !== undefined && code !== "0x";
  const delegate = delegateOfCode(code);

  // What the account looks like once the op's initCode ran: the state estimation needs now.
  let initFields: Pick<UserOpV08, "factory" | "factoryData" | "authorization"> = {};
  // The account as its call sees it (delegated, or made to look deployed) and as simulation must see it (only a
  // 7702 delegation: a factory account is deployed by the simulated initCode itself).
  let senderState: StateOverride[number] | undefined;
  let simulationState: StateOverride[number] | undefined;
  let measureCallInSimulation = false;
  const { authorization } = params;
  if (authorization) {
    if (hasCode && !delegate) throw new UserOperationRejectedError(`the sender ${sender} is a contract, not an EOA that can delegate (EIP-7702)`);
    if (!delegate || !isAddressEqual(delegate, authorization.address)) {
      initFields = { factory: EIP7702_FACTORY, authorization };
      senderState = { address: sender, code: delegationCode(authorization.address) };
      simulationState = senderState;
    }
  } else if (!hasCode) {
    if (!params.factory) throw new UserOperationRejectedError("AA20 account not deployed");
    initFields = { factory: params.factory, factoryData: params.factoryData ?? "0x" };
    const state = params.accountState ?? (await counterfactualAccountStateV08(chain, sender, concat([params.factory, initFields.factoryData!])));
    if (state?.[0]) senderState = state[0];
    else measureCallInSimulation = true;
  }

  const value = callValueV08(callData);
  const symbol = chain.nativeCurrency.symbol;
  if (value > balance) throw new InsufficientFundsError(sender, value, balance, { gasPrefund: 0n, deposit: 0n, value }, symbol);

  let callGas = 0n;
  if (!measureCallInSimulation) {
    let callEstimate: bigint;
    try {
      callEstimate = await client.estimateGas({ account: entryPoint, to: sender, data: callData, stateOverride: senderState ? [senderState] : undefined });
    } catch (err) {
      const data = revertDataOf(err);
      if (data !== undefined || /revert/i.test((err as Error).message)) throw new CallRevertedError(data ?? "0x", describeRevert(data));
      throw err;
    }
    callGas = callEstimate > 21_000n + calldataGas(callData) ? callEstimate - 21_000n - calldataGas(callData) : 0n;
  }

  const draft: UserOpV08 = {
    sender,
    nonce,
    ...initFields,
    callData,
    callGasLimit: measureCallInSimulation ? MEASURED_CALL_GAS : withMargin(callGas, CALL_GAS_MARGIN_V08),
    verificationGasLimit: SIMULATION_VERIFICATION_GAS,
    preVerificationGas: 0n,
    maxFeePerGas: fees.maxFeePerGas,
    maxPriorityFeePerGas: fees.maxPriorityFeePerGas,
    signature: DUMMY_SIGNATURE,
  };
  let stub: PaymasterFieldsV08 | undefined;
  if (params.paymasterStub || params.sponsored) {
    stub = params.paymasterStub ? await params.paymasterStub({ ...draft }) : await stubPaymasterV08(chain);
    Object.assign(draft, {
      paymaster: stub.paymaster,
      paymasterData: stub.paymasterData,
      paymasterVerificationGasLimit: SIMULATION_VERIFICATION_GAS,
      paymasterPostOpGasLimit: stub.paymasterPostOpGasLimit ?? 0n,
    });
  }
  draft.preVerificationGas = preVerificationGasV08(draft);
  const sponsored = paymasterPaysV08(draft);

  // Validation gas: the EntryPoint's own accounting (preOpGas) in simulation, the account's from a run where it pays
  // (an upper bound: a sponsored account does not send its prefund); the paymaster's from its own call (the
  // difference of the two runs would lose the prefund transfer); the account's delegation or deployment
  // state is what the bundle transaction will have (a 7702 authorization applies before handleOps runs).
  const accountPays = (op: UserOpV08): StateOverride => [
    { ...(simulationState ?? { address: sender }), balance: balance + requiredPrefundV08(op) },
  ];
  const unsponsored: UserOpV08 = { ...draft, paymaster: undefined, paymasterData: undefined, paymasterVerificationGasLimit: undefined, paymasterPostOpGasLimit: undefined };
  unsponsored.preVerificationGas = preVerificationGasV08(unsponsored);
  const [withPaymaster, accountOnly, paymasterCallGas] = await Promise.all([
    sponsored ? simulateHandleOpV08(chain, draft, simulationState ? [simulationState] : []) : null,
    // Measuring the call too: gas price 1 wei, so `paid` is gas.
    simulateHandleOpV08(chain, measureCallInSimulation ? { ...unsponsored, maxFeePerGas: 1n, maxPriorityFeePerGas: 1n } : unsponsored, accountPays(unsponsored)),
    sponsored ? paymasterValidationCallGas(chain, draft, senderState) : 0n,
  ]);
  const validationGas = accountOnly.preOpGas - unsponsored.preVerificationGas;
  let verificationGasLimit = withMargin(validationGas, VERIFICATION_GAS_MARGIN);
  if (params.signerKind === "sessionKey") verificationGasLimit += sessionKeyVerificationGasV08(callData);
  let paymasterValidationGas = 0n;
  let paymasterVerificationGasLimit: bigint | undefined;
  if (withPaymaster) {
    const total = withPaymaster.preOpGas - draft.preVerificationGas;
    paymasterValidationGas = total > validationGas + paymasterCallGas ? total - validationGas : paymasterCallGas;
    paymasterVerificationGasLimit = withMargin(paymasterValidationGas, PAYMASTER_GAS_MARGIN);
    if (stub?.paymasterVerificationGasLimit && stub.paymasterVerificationGasLimit > paymasterVerificationGasLimit) {
      paymasterVerificationGasLimit = stub.paymasterVerificationGasLimit;
    }
  }
  let callGasLimit = draft.callGasLimit;
  if (measureCallInSimulation) {
    callGas = executionGasOf(accountOnly.paid - accountOnly.preOpGas, MEASURED_CALL_GAS);
    callGasLimit = withMargin(callGas, CALL_GAS_MARGIN_V08);
  }

  let op: UserOpV08 = {
    ...draft,
    callGasLimit,
    verificationGasLimit,
    ...(withPaymaster ? { paymasterVerificationGasLimit } : {}),
    signature: "0x",
  };
  op.preVerificationGas = preVerificationGasV08({ ...op, signature: DUMMY_SIGNATURE });
  const maxCost = requiredPrefundV08(op);
  if (!sponsored) {
    const missing = maxCost > deposit ? maxCost - deposit : 0n;
    if (balance < missing + value) throw new InsufficientFundsError(sender, missing + value, balance, { gasPrefund: maxCost, deposit, value }, symbol);
  }
  if (params.sponsored && params.sponsorship && !params.paymasterStub) op = await sponsorUserOperationV08(chain, op, params.sponsorship);
  return { op, estimate: { validationGas, paymasterValidationGas, callGas, maxCost, value } };
}

const validatePaymasterUserOpAbi = parseAbi([
  "function validatePaymasterUserOp((address sender, uint256 nonce, bytes initCode, bytes callData, bytes32 accountGasLimits, uint256 preVerificationGas, bytes32 gasFees, bytes paymasterAndData, bytes signature) userOp, bytes32 userOpHash, uint256 maxCost) returns (bytes context, uint256 validationData)",
]);

/** What the EntryPoint spends around the paymaster's call within its limit: the paymaster's deposit decremented. */
const PAYMASTER_DEPOSIT_GAS = 10_000n;

/**
 * The paymaster's validation as the EntryPoint calls it (eth_estimateGas of validatePaymasterUserOp from the
 * EntryPoint, less intrinsic gas), plus the deposit bookkeeping AA36 also counts.
 */
async function paymasterValidationCallGas(chain: ChainConfig, op: UserOpV08, senderState: StateOverride[number] | undefined): Promise<bigint> {
  const data = encodeFunctionData({
    abi: validatePaymasterUserOpAbi,
    functionName: "validatePaymasterUserOp",
    args: [toPackedOp(op), keccak256("0x"), requiredPrefundV08(op)],
  });
  const gas = await publicClient(chain).estimateGas({
    account: serviceDeployment().entryPointV08,
    to: op.paymaster!,
    data,
    stateOverride: senderState ? [senderState] : undefined,
  });
  const intrinsic = 21_000n + calldataGas(data);
  return (gas > intrinsic ? gas - intrinsic : 0n) + PAYMASTER_DEPOSIT_GAS;
}

/** callGasLimit while measuring a factory account's call in simulation. */
const MEASURED_CALL_GAS = 3_000_000n;

/**
 * The execution gas used, from what the op paid beyond preOpGas at 1 wei: EntryPoint v0.8 adds 10% of the unused
 * execution gas when more than 40k is unused (x = used + (limit − used) / 10).
 */
function executionGasOf(paidBeyondPreOp: bigint, limit: bigint): bigint {
  if (limit - paidBeyondPreOp <= 40_000n) return paidBeyondPreOp;
  const used = (10n * paidBeyondPreOp - limit) / 9n;
  return used > 0n ? used : 0n;
}
