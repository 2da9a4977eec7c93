// Our VerifyingPaymasterV8's sponsorship of a v0.8 op: its stub fields for estimation and its paymasterData signed by
// the service (the hash and the data layout are lib/chain/paymaster-v08.ts, next to the contract).
import type { Address } from "viem";
import { serviceAccount } from "@/lib/keys/service-keys";
import { latestBlock } from "@/lib/chain/coalesce";
import { serviceDeployment } from "@/lib/chain/contracts";
import { paymasterDataV08, paymasterHashV08, stubPaymasterDataV08 } from "@/lib/chain/paymaster-v08";
import type { ChainConfig } from "@/lib/chain/registry";
import type { PaymasterFieldsV08 } from "./build-v08";
import type { UserOpV08 } from "./encoding-v08";
import { STUB_SPONSORSHIP_SECONDS } from "./gas";
import type { SponsorshipWindow } from "./paymaster";

/** VerifyingPaymasterV8 has no postOp (its validation returns an empty context). */
export const PAYMASTER_POST_OP_GAS_V08 = 0n;

/** Our VerifyingPaymasterV8's fields with a stub signature (final length), valid an hour from the chain's clock. */
export async function stubPaymasterV08(chain: ChainConfig): Promise<PaymasterFieldsV08> {
  const { timestamp } = await latestBlock(chain);
  return {
    paymaster: serviceDeployment().paymasterV08,
    paymasterData: stubPaymasterDataV08({ validUntil: Number(timestamp) + STUB_SPONSORSHIP_SECONDS, validAfter: 0 }),
    paymasterPostOpGasLimit: PAYMASTER_POST_OP_GAS_V08,
  };
}

/**
 * `op` with our VerifyingPaymasterV8's sponsorship for `window`: paymasterData = abi.encode(validUntil, validAfter) ++
 * the paymaster signer's EIP-191 signature of getHash. Every gas field is final by then (the hash covers them, the
 * paymaster's two limits included); the account signs after this. `delegate` as for userOperationHashV08.
 */
export async function sponsorUserOperationV08(chain: ChainConfig, op: UserOpV08, window: SponsorshipWindow, delegate?: Address): Promise<UserOpV08> {
  const paymaster = serviceDeployment().paymasterV08;
  const sponsored: UserOpV08 = {
    ...op,
    paymaster,
    paymasterVerificationGasLimit: op.paymasterVerificationGasLimit ?? 0n,
    paymasterPostOpGasLimit: op.paymasterPostOpGasLimit ?? PAYMASTER_POST_OP_GAS_V08,
  };
  const hash = paymasterHashV08(chain.chainId, paymaster, sponsored, window, delegate);
  const signature = await serviceAccount("paymaster-signer").signMessage({ message: { raw: hash } });
  return { ...sponsored, paymasterData: paymasterDataV08(window, signature) };
}
