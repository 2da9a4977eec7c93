// eth_sendUserOperation for EntryPoint v0.8: the op checked as v0.6's are (sender, gas, sponsorship on record, the
// EntryPoint's own validation by a handleOps call), plus EIP-7702: a Delegated_v08 account's op carries (or needs) its
// owner's authorization for our DelegatedAccountV8, checked as the chain will take it before anything is relayed.
import { encodeFunctionData, getAddress, isAddressEqual, type Address, type Hex, type StateOverride } from "viem";
import { entryPointV08Abi } from "@/contracts/artifacts";
import { onChain, publicClient } from "@/lib/chain/clients";
import { serviceDeployment } from "@/lib/chain/contracts";
import { authorizationProblem, delegationOverride } from "@/lib/chain/eip7702";
import type { ChainConfig } from "@/lib/chain/registry";
import {
  describeRevert,
  failedOpV08,
  paymasterPaysV08,
  preVerificationGasV08,
  revertDataOf,
  toPackedOp,
  UserOperationRejectedError,
  userOperationHashV08,
  type UserOpV08,
} from "@/lib/chain/userop";
import type { Db } from "@/lib/db/client";
import { checkDelegation } from "@/lib/paymasters/senders";
import type { ProjectContext } from "@/lib/tenant";
import { invalidParams } from "./errors";
import type { BundlerSender } from "./sender";
import { checkGas } from "./gas";
import { sponsorshipOnRecord } from "./sponsorship";

/** Any address with no code takes the EntryPoint's compensation in a validation call (the zero address is refused, AA90). */
const PROBE_BENEFICIARY: Address = "0x000000000000000000000000000000000000dEaD";


export interface CheckedV08 {
  hash: Hex;
  /** The policy whose ERC-7677 sponsorship the op carries; null when the account pays. */
  policyId: string | null;
}

/** The v0.8 op's hash: with the 7702 marker and no authorization, the EOA's current delegate (ours) is hashed. */
export async function hashV08(chain: ChainConfig, op: UserOpV08, sender: BundlerSender): Promise<{ hash: Hex; current: Address | null }> {
  const { delegate, current } = await checkDelegation(chain, op, sender.accountType);
  return { hash: userOperationHashV08(chain, op, delegate), current };
}

/** Everything before recording: the authorization as the chain will take it, gas, sponsorship, the EntryPoint's validation. */
export async function checkV08(db: Db, ctx: ProjectContext, chain: ChainConfig, op: UserOpV08, hash: Hex, current: Address | null): Promise<CheckedV08> {
  // An authorization already in place is not sent again (the relay skips it), so only a new one is checked.
  const pending = op.authorization && !(current && isAddressEqual(current, op.authorization.address)) ? op.authorization : undefined;
  if (pending) {
    const problem = await onChain(chain, () => authorizationProblem(chain, op.sender, pending));
    if (problem) throw invalidParams(`Invalid userOperation.eip7702Auth: ${problem}. Sign a new one (viem: owner.signAuthorization / walletClient.signAuthorization).`, "userOperation.eip7702Auth");
  }
  await checkGasV08(chain, op);
  const policyId = await sponsorshipOfV08(db, ctx, chain, op, hash);
  await validateV08(chain, op, pending ? delegationOverride(op.sender, pending.address) : []);
  return { hash, policyId };
}

/** As v0.6's, over v0.8's limits (the paymaster's two included; no ×3) and an authorization's cost. */
const checkGasV08 = (chain: ChainConfig, op: UserOpV08) =>
  checkGas(chain, op, {
    calldataGas: preVerificationGasV08(op),
    totalGas: op.callGasLimit + op.verificationGasLimit + (op.paymasterVerificationGasLimit ?? 0n) + (op.paymasterPostOpGasLimit ?? 0n) + op.preVerificationGas,
    covers: `the operation's calldata${op.authorization ? " and its EIP-7702 authorization" : ""}`,
  });

/** As v0.6's sponsorshipOf: only our VerifyingPaymasterV8, and only for the exact op it signed in this project. */
async function sponsorshipOfV08(db: Db, ctx: ProjectContext, chain: ChainConfig, op: UserOpV08, hash: Hex): Promise<string | null> {
  if (!paymasterPaysV08(op)) return null;
  const { paymasterV08 } = serviceDeployment();
  if (!isAddressEqual(op.paymaster!, paymasterV08)) {
    throw invalidParams(
      `userOperation.paymaster ${getAddress(op.paymaster!)}: this bundler relays v0.8 operations paid by their account or sponsored by this service's paymaster ${paymasterV08} (pm_getPaymasterData at this URL).`,
      "userOperation.paymaster",
    );
  }
  return sponsorshipOnRecord(db, ctx, chain, hash, "userOperation.paymasterData");
}

/**
 * EntryPoint v0.8's own validation of the op as a bundle would run it (handleOps, called, not sent), with the op's
 * pending EIP-7702 delegation put in place by a state override as the type-4 transaction would: AA2x signature and
 * nonce, AA3x the paymaster's. A call that reverts inside the op is not a refusal (it lands, as failed).
 */
async function validateV08(chain: ChainConfig, op: UserOpV08, stateOverride: StateOverride): Promise<void> {
  const { entryPointV08 } = serviceDeployment();
  const data = encodeFunctionData({ abi: entryPointV08Abi, functionName: "handleOps", args: [[toPackedOp(op)], PROBE_BENEFICIARY] });
  let revert: Hex | undefined;
  try {
    await onChain(chain, () => publicClient(chain).call({ to: entryPointV08, data, ...(stateOverride.length > 0 && { stateOverride }) }));
    return;
  } catch (err) {
    revert = revertDataOf(err);
    if (revert === undefined) throw err;
  }
  const failed = failedOpV08(revert);
  if (failed) throw new UserOperationRejectedError(failed.reason, failed.index);
  throw new UserOperationRejectedError(`validation reverted: ${describeRevert(revert)}`);
}
