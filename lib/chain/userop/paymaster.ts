// The VerifyingPaymaster's sponsorship: its window, its hash, paymasterAndData signed by the service, and a stub of it.
import { concat, encodeAbiParameters, keccak256, type Address, type Hex } from "viem";
import { serviceAccount } from "@/lib/keys/service-keys";
import { latestBlock } from "@/lib/chain/coalesce";
import { serviceDeployment } from "@/lib/chain/contracts";
import type { ChainConfig } from "@/lib/chain/registry";
import type { UserOp } from "./encoding";
import { DUMMY_SIGNATURE, STUB_SPONSORSHIP_SECONDS } from "./gas";

export interface SponsorshipWindow {
  /** Unix seconds; 0 means no expiry. */
  validUntil: number;
  /** Unix seconds; 0 means valid at once. */
  validAfter: number;
}

/** A window of `seconds` from now, in the chain's time, which a node's clock (or a test chain's) need not share with ours. */
export async function sponsorshipWindow(chain: ChainConfig, seconds: number): Promise<SponsorshipWindow> {
  const { timestamp } = await latestBlock(chain);
  return { validUntil: Number(timestamp) + seconds, validAfter: 0 };
}

/** VerifyingPaymaster.getHash(op, validUntil, validAfter), computed off-chain. */
export function paymasterHash(chainId: number, paymaster: Address, op: UserOp, window: SponsorshipWindow): Hex {
  return keccak256(
    encodeAbiParameters(
      [
        { type: "address" },
        { type: "uint256" },
        { type: "bytes32" },
        { type: "bytes32" },
        { type: "uint256" },
        { type: "uint256" },
        { type: "uint256" },
        { type: "uint256" },
        { type: "uint256" },
        { type: "uint256" },
        { type: "address" },
        { type: "uint48" },
        { type: "uint48" },
      ],
      [
        op.sender,
        op.nonce,
        keccak256(op.initCode ?? "0x"),
        keccak256(op.callData),
        op.callGasLimit,
        op.verificationGasLimit,
        op.preVerificationGas,
        op.maxFeePerGas,
        op.maxPriorityFeePerGas,
        BigInt(chainId),
        paymaster,
        window.validUntil,
        window.validAfter,
      ],
    ),
  );
}

const encodeWindow = (window: SponsorshipWindow) =>
  encodeAbiParameters([{ type: "uint48" }, { type: "uint48" }], [window.validUntil, window.validAfter]);

/** The paymaster's sponsorship of `op`: paymaster ++ abi.encode(validUntil, validAfter) ++ the paymaster signer's signature. */
export async function signPaymasterAndData(chain: ChainConfig, op: UserOp, window: SponsorshipWindow): Promise<Hex> {
  const { paymaster } = serviceDeployment();
  const hash = paymasterHash(chain.chainId, paymaster, op, window);
  const signature = await serviceAccount("paymaster-signer").signMessage({ message: { raw: hash } });
  return concat([paymaster, encodeWindow(window), signature]);
}

/** `op` with the service's sponsorship (paymasterAndData) signed; the account signs after this. */
export async function sponsorUserOperation(chain: ChainConfig, op: UserOp, window: SponsorshipWindow): Promise<UserOp> {
  return { ...op, paymasterAndData: await signPaymasterAndData(chain, op, window) };
}

/** paymasterAndData of the final length and a realistic byte mix, for estimation before the real one is signed. */
export function stubPaymasterAndData(now: number): Hex {
  return concat([serviceDeployment().paymaster, encodeWindow({ validUntil: now + STUB_SPONSORSHIP_SECONDS, validAfter: 0 }), DUMMY_SIGNATURE]);
}
