// EIP-7702 delegations: an EOA's code as a delegation designator, reading whom an EOA delegates to, signing and
// checking authorizations (the `authorization` a v0.8 user operation carries, `eip7702Auth` over RPC).
import { concat, isAddressEqual, size, slice, type Address, type Hex, type LocalAccount, type SignedAuthorization, type StateOverride } from "viem";
import { recoverAuthorizationAddress } from "viem/utils";
import { publicClient } from "@/lib/chain/clients";
import type { ChainConfig } from "@/lib/chain/registry";

/** The code an EOA has once it delegates to `implementation`: 0xef0100 ++ implementation. */
export const delegationCode = (implementation: Address): Hex => concat(["0xef0100", implementation]);

/** Whom `code` delegates to, or null when it is not a delegation designator (no code, or a contract's code). */
export function delegateOfCode(code: Hex | undefined): Address | null {
  if (!code || size(code) !== 23 || slice(code, 0, 3).toLowerCase() !== "0xef0100") return null;
  return slice(code, 3) as Address;
}

/** The EOA's current delegation: { code } as on chain, and whom it delegates to (null: none, or a contract). */
export async function delegationOf(chain: ChainConfig, address: Address): Promise<{ delegate: Address | null; hasCode: boolean }> {
  const code = await publicClient(chain).getCode({ address });
  return { delegate: delegateOfCode(code), hasCode: code !== undefined && code !== "0x" };
}

/** State override that makes `address` delegate to `implementation` (for eth_call / eth_estimateGas before the delegation lands). */
export const delegationOverride = (address: Address, implementation: Address): StateOverride => [
  { address, code: delegationCode(implementation) },
];

/**
 * `signer` authorizes its EOA to delegate to `implementation` on `chain`, with the EOA's next nonce (read from the
 * chain unless given). The signer's own transaction would need nonce + 1; a relayer sends it, so the nonce is the next one.
 */
export async function signDelegation(
  chain: ChainConfig,
  signer: LocalAccount,
  implementation: Address,
  nonce?: number,
): Promise<SignedAuthorization> {
  if (!signer.signAuthorization) throw new Error(`Account ${signer.address} cannot sign EIP-7702 authorizations`);
  const next = nonce ?? (await publicClient(chain).getTransactionCount({ address: signer.address, blockTag: "pending" }));
  return signer.signAuthorization({ address: implementation, chainId: chain.chainId, nonce: next });
}

/**
 * Why `authorization` would not take effect for `authority` on `chain` now (a node skips such an authorization
 * silently, and the EntryPoint then sees an EOA without code), or null when it would: the signer, the chain (0 = any)
 * and the EOA's current nonce must match.
 */
export async function authorizationProblem(chain: ChainConfig, authority: Address, authorization: SignedAuthorization): Promise<string | null> {
  if (authorization.chainId !== 0 && authorization.chainId !== chain.chainId) {
    return `the EIP-7702 authorization is for chain ${authorization.chainId}, not ${chain.chainId}`;
  }
  let signer: Address;
  try {
    signer = await recoverAuthorizationAddress({ authorization });
  } catch {
    return "the EIP-7702 authorization's signature is malformed";
  }
  if (!isAddressEqual(signer, authority)) return `the EIP-7702 authorization is signed by ${signer}, not by the account ${authority}`;
  const nonce = await publicClient(chain).getTransactionCount({ address: authority, blockTag: "pending" });
  if (authorization.nonce !== nonce) return `the EIP-7702 authorization has nonce ${authorization.nonce}, but the account's nonce is ${nonce}`;
  return null;
}
