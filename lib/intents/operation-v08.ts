// Building an intent's operation for an EntryPoint v0.8 account (Upgradeable_v08, Delegated_v08): its init fields
// (the factory call, or a Delegated_v08 EOA's EIP-7702 authorization), gas, our VerifyingPaymasterV8's sponsorship.
import { getAddress, isAddressEqual, type Address, type Hex, type SignedAuthorization } from "viem";
import { foreignDelegation } from "@/lib/accounts/delegation";
import { isDelegatedType } from "@/lib/account-records/types";
import { deploymentOf } from "@/lib/chain/accounts";
import { onChain, publicClient } from "@/lib/chain/clients";
import { serviceDeployment } from "@/lib/chain/contracts";
import { authorizationProblem, delegateOfCode, signDelegation } from "@/lib/chain/eip7702";
import { stubPaymasterDataV08 } from "@/lib/chain/paymaster-v08";
import type { ChainConfig } from "@/lib/chain/registry";
import {
  DUMMY_SIGNATURE,
  encodeAccountCallsV08,
  estimateUserOperationV08,
  preVerificationGasV08,
  requiredPrefundV08,
  PAYMASTER_POST_OP_GAS_V08,
  sponsorUserOperationV08,
  type AccountCall,
  type PaymasterFieldsV08,
  type UserOpV08,
} from "@/lib/chain/userop";
import { badRequest } from "@/lib/errors";
import { sponsorClock, SPONSORSHIP_SECONDS } from "@/lib/paymasters/sponsor";
import type { PolicyRow } from "@/lib/policies/service";
import type { TokenChargePlan } from "@/lib/policies/tokens";
import { transferCall } from "@/lib/policies/tokens";
import type { IntentSender } from "./sender";
import { unsignedAuthorization } from "@/lib/intent-records/versioned-op";

/** Our VerifyingPaymasterV8's side of a v0.8 op: a stub for estimation, then the signed paymasterData. */
export interface PaymasterSponsorV08 {
  stub(draft: UserOpV08): Promise<PaymasterFieldsV08>;
  sign(op: UserOpV08): Promise<Hex>;
  remote: false;
}

/**
 * VerifyingPaymasterV8 (serviceDeployment().paymasterV08): its stub fields (stubPaymasterV08's, of the final window's
 * length) and lib/chain/userop's sponsorship, the window SPONSORSHIP_SECONDS. Both from the chain time read when the
 * sponsor is made (sponsorClock), not from a latest block read of their own each: two sequential round trips fewer.
 */
export function ourSponsorV08(chain: ChainConfig): PaymasterSponsorV08 {
  const now = sponsorClock(chain);
  return {
    remote: false,
    stub: async () => ({
      paymaster: serviceDeployment().paymasterV08,
      paymasterData: stubPaymasterDataV08({ validUntil: (await now()) + SPONSORSHIP_SECONDS, validAfter: 0 }),
      paymasterPostOpGasLimit: PAYMASTER_POST_OP_GAS_V08,
    }),
    sign: async (op) => (await sponsorUserOperationV08(chain, op, { validUntil: (await now()) + SPONSORSHIP_SECONDS, validAfter: 0 })).paymasterData!,
  };
}

/**
 * The sponsor of a v0.8 intent under `policy`: our VerifyingPaymasterV8. A policy naming a registered ERC-7677 paymaster
 * is refused for now (those services are asked for EntryPoint v0.6 operations).
 */
export function sponsorOfV08(chain: ChainConfig, policy: PolicyRow): PaymasterSponsorV08 {
  if (policy.paymasterId) {
    const why = `its paymaster ${policy.paymasterId} is an ERC-7677 service asked for EntryPoint v0.6 operations only`;
    throw badRequest(`Policy ${policy.id} cannot sponsor an EntryPoint v0.8 account's intent: ${why}. Use a policy without a paymaster (this service's own VerifyingPaymasterV8).`, {
      policy: { value: policy.id, message: why },
    });
  }
  return ourSponsorV08(chain);
}

/** A signed EIP-7702 authorization as the API takes it (viem's SignedAuthorization JSON: address or contractAddress, yParity or v). */
export interface AuthorizationInput {
  address?: string;
  contractAddress?: string;
  chainId: number;
  nonce: number;
  r: string;
  s: string;
  yParity?: number;
  v?: number | string;
}

export function authorizationOf(input: AuthorizationInput, param = "signedAuthorization"): SignedAuthorization {
  const address = input.address ?? input.contractAddress;
  if (!address) throw badRequest(`${param} needs the delegate's address (address or contractAddress).`, { [param]: { message: "address is required" } });
  let yParity = input.yParity;
  if (yParity === undefined && input.v !== undefined) {
    const v = Number(input.v);
    yParity = v === 27 || v === 0 ? 0 : v === 28 || v === 1 ? 1 : undefined;
  }
  if (yParity !== 0 && yParity !== 1) throw badRequest(`${param} needs yParity (0 or 1), or v (27 or 28).`, { [param]: { message: "yParity is required" } });
  return { address: getAddress(address), chainId: input.chainId, nonce: input.nonce, r: input.r as Hex, s: input.s as Hex, yParity };
}

/** Where a v0.8 op's account stands: undeployed (its factory call, or for a delegated EOA the authorization it needs), or ready. */
interface InitFields {
  factory?: Address;
  factoryData?: Hex;
  authorization?: SignedAuthorization;
  /**
   * The op runs after another intent's op deploys (or delegates) the account: estimated with these fields (the
   * account as it will be), then built without them; the relay holds it until the account has code.
   */
  afterDeployment?: boolean;
}

/**
 * The init fields of the op: none once the account has code (delegating to ours); the factory call for an Upgradeable_v08
 * account not deployed; for a Delegated_v08 EOA not yet delegating to ours, an authorization: the owner's
 * `signedAuthorization` (checked: our implementation, this chain, the EOA's nonce, signed by the EOA), the service's
 * own for a custodial account, else one left unsigned for the owner to sign (the intent's nextAction says what).
 * An EOA delegating elsewhere is refused (409) unless its owner signed an authorization back to ours.
 */
async function initFields(chain: ChainConfig, sender: IntentSender, deploying: boolean, signedAuthorization?: SignedAuthorization): Promise<InitFields> {
  const code = await onChain(chain, () => publicClient(chain).getCode({ address: sender.address }));
  const hasCode = code !== undefined && code !== "0x";
  if (!isDelegatedType(sender.accountType)) {
    if (signedAuthorization) throw badRequest("signedAuthorization applies to Delegated_v08 accounts only.", { signedAuthorization: { message: `account ${sender.id} is not a delegated account` } });
    if (hasCode) return {};
    const { factory, data } = deploymentOf(sender);
    return { factory, factoryData: data, afterDeployment: !deploying };
  }
  const implementation = serviceDeployment().delegatedAccountV08;
  const delegate = delegateOfCode(code);
  // Already in place: nothing to carry (a signedAuthorization given anyway is not needed).
  if (delegate && isAddressEqual(delegate, implementation)) return {};
  if (hasCode && !signedAuthorization) throw foreignDelegation({ id: sender.id, address: sender.address }, delegate ?? sender.address);
  if (!deploying) {
    // Another intent delegates the EOA: estimated as delegating, built without an authorization of its own.
    return { authorization: unsignedAuthorization(implementation, chain.chainId, 0), afterDeployment: true };
  }
  if (signedAuthorization) {
    if (!isAddressEqual(signedAuthorization.address, implementation)) {
      throw badRequest(`signedAuthorization delegates to ${signedAuthorization.address}, not to this service's DelegatedAccountV8 ${implementation}: sign one for ${implementation}.`, {
        signedAuthorization: { value: signedAuthorization.address, message: `expected ${implementation}` },
      });
    }
    const problem = await onChain(chain, () => authorizationProblem(chain, sender.address, signedAuthorization));
    if (problem) throw badRequest(`signedAuthorization cannot delegate account ${sender.id}: ${problem}.`, { signedAuthorization: { message: problem } });
    return { authorization: signedAuthorization };
  }
  if (sender.signer) return { authorization: await onChain(chain, () => signDelegation(chain, sender.signer!, implementation)) };
  const nonce = await onChain(chain, () => publicClient(chain).getTransactionCount({ address: sender.address, blockTag: "pending" }));
  return { authorization: unsignedAuthorization(implementation, chain.chainId, nonce) };
}

export interface PlannedOperationV08 {
  op: UserOpV08;
  maxCost: bigint;
  tokenCharge: bigint | null;
  paymaster: PaymasterSponsorV08 | null;
}

/** planOperation for a v0.8 account: calls through execute/executeBatch (Call[]), our VerifyingPaymasterV8 when sponsored. */
export async function planOperationV08(
  chain: ChainConfig,
  sender: IntentSender,
  plan: { calls: AccountCall[]; callData?: Hex; policy: PolicyRow | null; signedAuthorization?: SignedAuthorization; nonceKey: bigint },
  charging: TokenChargePlan | null,
  deploying: boolean,
): Promise<PlannedOperationV08> {
  const paymaster = plan.policy ? sponsorOfV08(chain, plan.policy) : null;
  const { afterDeployment, ...init } = await initFields(chain, sender, deploying, plan.signedAuthorization);
  const callData = (charge?: bigint): Hex => {
    if (plan.callData) return plan.callData;
    const all = charging ? [...plan.calls, transferCall(charging.token, charging.collector.address as Address, charge!)] : plan.calls;
    return all.length ? encodeAccountCallsV08(all) : "0x";
  };
  const { op: estimated, estimate } = await estimateUserOperationV08(chain, {
    sender: sender.address,
    ...init,
    callData: callData(charging?.estimateAmount),
    nonceKey: plan.nonceKey,
    ...(paymaster && { paymasterStub: paymaster.stub }),
  });
  let op = estimated;
  if (afterDeployment) {
    // Its limits keep the deployment's gas (a little more than it needs); its own bytes are fewer.
    op = { ...op, factory: undefined, factoryData: undefined, authorization: undefined };
    op.preVerificationGas = preVerificationGasV08({ ...op, signature: DUMMY_SIGNATURE });
  }
  let tokenCharge: bigint | null = null;
  if (charging) {
    tokenCharge = charging.chargeFor(estimate.maxCost, op.maxFeePerGas);
    op = { ...op, callData: callData(tokenCharge) };
    op.preVerificationGas = preVerificationGasV08({ ...op, signature: DUMMY_SIGNATURE });
  }
  return { op, maxCost: requiredPrefundV08(op), tokenCharge, paymaster };
}
