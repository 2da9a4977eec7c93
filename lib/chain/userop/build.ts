// Building a user operation: nonce, fees and gas limits found by simulation (estimateUserOperation), and
// EntryPoint.simulateHandleOp.
import { decodeErrorResult, encodeFunctionData, zeroAddress, type Address, type Hex, type StateOverride } from "viem";
import { entryPointAbi } from "@/contracts/artifacts";
import { publicClient } from "@/lib/chain/clients";
import { latestBlock } from "@/lib/chain/coalesce";
import { serviceDeployment } from "@/lib/chain/contracts";
import type { ChainConfig } from "@/lib/chain/registry";
import { callValue, toEntryPointOp, type UserOp } from "./encoding";
import { CallRevertedError, InsufficientFundsError, UserOperationRejectedError } from "./errors";
import {
  CALL_GAS_MARGIN,
  calldataGas,
  chainFees,
  counterfactualAccountState,
  DUMMY_SIGNATURE,
  preVerificationGas,
  requiredPrefund,
  sessionKeyVerificationGas,
  SIMULATION_VERIFICATION_GAS,
  VERIFICATION_GAS_MARGIN,
  withMargin,
} from "./gas";
import { sponsorUserOperation, stubPaymasterAndData, type SponsorshipWindow } from "./paymaster";
import { describeRevert, revertDataOf } from "./revert";

export interface BuildUserOperationParams {
  sender: Address;
  /** Deploys the account (our factory's createAccount); "0x" once deployed. Dropped when the account already has code. */
  initCode: Hex;
  /**
   * The account is not deployed yet, but another op (carrying `initCode`) deploys it before this one runs: the op is
   * built without initCode, its gas estimated as if the account were deployed (`initCode` still tells its owner).
   */
  deployedFirst?: boolean;
  callData: Hex;
  /** The 2D nonce key (192 bits): ops with different keys never wait for each other. Default 0. */
  nonceKey?: bigint;
  /** Our paymaster pays; otherwise the account pays from its EntryPoint deposit and balance. */
  sponsored: boolean;
  /** Who will sign: a session key's validation costs more gas than the owner's (or a guardian's). Default "owner". */
  signerKind?: "owner" | "sessionKey";
  /** With `sponsored`, sign the sponsorship at once for this window; otherwise paymasterAndData is left a stub to sign with signPaymasterAndData. */
  sponsorship?: SponsorshipWindow;
  /**
   * With `sponsored`, the stub paymasterAndData for simulation, from the paymaster that will sign (an ERC-7677
   * service's pm_getPaymasterStubData); our VerifyingPaymaster's stub by default. Gets the draft op (dummy signature).
   */
  paymasterStub?: (draft: UserOp) => Promise<Hex>;
}

export interface UserOperationEstimate {
  /** Gas the validation used in simulation (account deployment, validateUserOp and the paymaster). */
  validationGas: bigint;
  /** eth_estimateGas of the account call from the EntryPoint, less its intrinsic gas. */
  callGas: bigint;
  /** The most the op can cost its payer: requiredPrefund(op). */
  maxCost: bigint;
  /** ETH the call itself sends from the account (execute/executeBatch values). */
  value: bigint;
}

/**
 * An unsigned user operation with real gas figures (see estimateUserOperation). Its `signature` is "0x"; when
 * sponsored without `sponsorship`, its paymasterAndData is a stub of the final length to replace with
 * signPaymasterAndData before the account signs.
 */
export async function buildUserOperation(chain: ChainConfig, params: BuildUserOperationParams): Promise<UserOp> {
  return (await estimateUserOperation(chain, params)).op;
}

/**
 * Builds the op and says how its gas was found:
 * - nonce: EntryPoint.getNonce(sender, nonceKey); fees: chainFees.
 * - callGasLimit: eth_estimateGas of the account call from the EntryPoint (the node's binary search honours the 63/64
 *   rule), an undeployed account made to look deployed with a state override; less intrinsic gas, +20% +10k.
 *   A revert there is a CallRevertedError with its decoded reason.
 * - verificationGasLimit: EntryPoint.simulateHandleOp with a dummy signature and stub paymasterAndData of final
 *   length (an unsponsored sender's balance overridden so the prefund never fails): preOpGas − preVerificationGas,
 *   +30% +10k (session keys: +50k +2.5k per call target). A FailedOp there is a UserOperationRejectedError ("AAxx …").
 * - preVerificationGas: the v0.6 bundler calldata formula (preVerificationGas()).
 * Unsponsored, the account must hold the prefund its deposit does not cover plus the value it sends, or this throws
 * InsufficientFundsError before anything is sent; sponsored, it must hold the value.
 */
export async function estimateUserOperation(
  chain: ChainConfig,
  params: BuildUserOperationParams,
): Promise<{ op: UserOp; estimate: UserOperationEstimate }> {
  const client = publicClient(chain);
  const { entryPoint } = serviceDeployment();
  const { sender, callData, sponsored } = params;
  const nonceKey = params.nonceKey ?? 0n;
  if (nonceKey < 0n || nonceKey >= 1n << 192n) throw new UserOperationRejectedError("the nonce key must fit in 192 bits");

  const [nonce, fees, code, balance, deposit, block] = await Promise.all([
    client.readContract({ address: entryPoint, abi: entryPointAbi, functionName: "getNonce", args: [sender, nonceKey] }),
    chainFees(chain),
    client.getCode({ address: sender }),
    client.getBalance({ address: sender }),
    client.readContract({ address: entryPoint, abi: entryPointAbi, functionName: "balanceOf", args: [sender] }),
    latestBlock(chain),
  ]);
  const deployed = code !== undefined && code !== "0x";
  if (!deployed && params.initCode === "0x") throw new UserOperationRejectedError("AA20 account not deployed");
  const afterDeployment = !deployed && params.deployedFirst === true;
  const initCode: Hex = deployed || afterDeployment ? "0x" : params.initCode;
  const accountState = deployed ? undefined : await counterfactualAccountState(chain, sender, params.initCode);

  const value = callValue(callData);
  const symbol = chain.nativeCurrency.symbol;
  if (value > balance) {
    throw new InsufficientFundsError(sender, value, balance, { gasPrefund: 0n, deposit: 0n, value }, symbol);
  }

  // callGasLimit: the account call exactly as the EntryPoint makes it.
  let callEstimate: bigint;
  try {
    callEstimate = await client.estimateGas({
      account: entryPoint,
      to: sender,
      data: callData,
      stateOverride: accountState,
    });
  } catch (err) {
    const data = revertDataOf(err);
    if (data !== undefined || /revert/i.test((err as Error).message)) throw new CallRevertedError(data ?? "0x", describeRevert(data));
    throw err;
  }
  const callGas = callEstimate > 21_000n + calldataGas(callData) ? callEstimate - 21_000n - calldataGas(callData) : 0n;
  const callGasLimit = withMargin(callGas, CALL_GAS_MARGIN);

  const draft: UserOp = {
    sender,
    nonce,
    initCode,
    callData,
    callGasLimit,
    verificationGasLimit: SIMULATION_VERIFICATION_GAS,
    preVerificationGas: 0n,
    maxFeePerGas: fees.maxFeePerGas,
    maxPriorityFeePerGas: fees.maxPriorityFeePerGas,
    paymasterAndData: "0x",
    signature: DUMMY_SIGNATURE,
  };
  if (sponsored) draft.paymasterAndData = params.paymasterStub ? await params.paymasterStub({ ...draft }) : stubPaymasterAndData(Number(block.timestamp));
  draft.preVerificationGas = preVerificationGas(draft);

  // verificationGasLimit: what validation (deployment, account, paymaster) used in simulateHandleOp.
  // An op that runs after another deployed its account validates against the deployed account.
  const senderState = afterDeployment ? accountState![0]! : { address: sender };
  const simulationOverride: StateOverride | undefined =
    sponsored && !afterDeployment ? undefined : [{ ...senderState, ...(sponsored ? {} : { balance: balance + requiredPrefund(draft) }) }];
  const result = await simulateHandleOp(chain, draft, simulationOverride);
  const validationGas = result.preOpGas - draft.preVerificationGas;
  let verificationGasLimit = withMargin(validationGas, VERIFICATION_GAS_MARGIN);
  if (params.signerKind === "sessionKey") verificationGasLimit += sessionKeyVerificationGas(callData);

  let op: UserOp = { ...draft, verificationGasLimit, signature: "0x" };
  op.preVerificationGas = preVerificationGas({ ...op, signature: DUMMY_SIGNATURE });
  const maxCost = requiredPrefund(op);

  if (!sponsored) {
    const missing = maxCost > deposit ? maxCost - deposit : 0n;
    if (balance < missing + value) {
      throw new InsufficientFundsError(sender, missing + value, balance, { gasPrefund: maxCost, deposit, value }, symbol);
    }
  }
  if (sponsored && params.sponsorship) op = await sponsorUserOperation(chain, op, params.sponsorship);
  return { op, estimate: { validationGas, callGas, maxCost, value } };
}

export interface ExecutionResult {
  preOpGas: bigint;
  paid: bigint;
  validAfter: number;
  validUntil: number;
}

/** EntryPoint.simulateHandleOp (which always reverts): its ExecutionResult, or the FailedOp as UserOperationRejectedError. */
export async function simulateHandleOp(chain: ChainConfig, op: UserOp, stateOverride?: StateOverride): Promise<ExecutionResult> {
  const { entryPoint } = serviceDeployment();
  const data = encodeFunctionData({
    abi: entryPointAbi,
    functionName: "simulateHandleOp",
    args: [toEntryPointOp(op), zeroAddress, "0x"],
  });
  let revert: Hex | undefined;
  try {
    await publicClient(chain).call({ to: entryPoint, data, stateOverride });
  } catch (err) {
    revert = revertDataOf(err);
    if (revert === undefined) throw err;
  }
  if (revert === undefined) throw new Error("EntryPoint.simulateHandleOp returned instead of reverting");
  let decoded;
  try {
    decoded = decodeErrorResult({ abi: entryPointAbi, data: revert });
  } catch {
    throw new UserOperationRejectedError(`simulation reverted: ${describeRevert(revert)}`);
  }
  if (decoded.errorName === "ExecutionResult") {
    const [preOpGas, paid, validAfter, validUntil] = decoded.args;
    return { preOpGas, paid, validAfter, validUntil };
  }
  if (decoded.errorName === "FailedOp") throw new UserOperationRejectedError(decoded.args[1], Number(decoded.args[0]));
  throw new UserOperationRejectedError(`simulation reverted: ${describeRevert(revert)}`);
}
