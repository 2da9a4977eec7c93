import {
  BaseError,
  ContractFunctionRevertedError,
  ContractFunctionZeroDataError,
  concat,
  decodeFunctionData,
  encodeAbiParameters,
  encodeFunctionData,
  erc721Abi,
  getContractAddress,
  hashTypedData,
  isAddressEqual,
  size,
  slice,
  type Address,
  type Hex,
  type StateOverride,
} from "viem";
import { erc6551RegistryAbi } from "@/contracts/artifacts";
import { publicClient } from "./clients";
import { serviceDeployment } from "./contracts";
import type { Deployment } from "./deployment";
import type { ChainConfig } from "./registry";

/** Our registry and implementation (the service's by default; tests pass a chain's). */
type TokenBoundContracts = Pick<Deployment, "tokenBoundRegistry" | "tokenBoundAccountImplementation">;

/** What an ERC6551V1 account's address is made of: the token (on `chainId`) and the registry salt. */
export interface TokenBinding {
  chainId: number;
  tokenContract: Address;
  tokenId: bigint;
  salt: Hex;
}

/** The token binding of a recorded ERC6551V1 account (its tokenContract and tokenId columns). */
export function tokenBindingOf(account: { chainId: number; salt: string; tokenContract: string | null; tokenId: string | null }): TokenBinding {
  if (!account.tokenContract || account.tokenId === null) throw new Error("an ERC6551V1 account needs tokenContract and tokenId");
  return { chainId: account.chainId, tokenContract: account.tokenContract as Address, tokenId: BigInt(account.tokenId), salt: account.salt as Hex };
}

/** EIP-6551's account code: an ERC-1167 proxy to `implementation` followed by the footer (salt, chainId, token). */
export function tokenBoundRuntimeCode(implementation: Address, b: TokenBinding): Hex {
  const footer = encodeAbiParameters(
    [{ type: "bytes32" }, { type: "uint256" }, { type: "address" }, { type: "uint256" }],
    [b.salt, BigInt(b.chainId), b.tokenContract, b.tokenId],
  );
  return concat(["0x363d3d373d3d3d363d73", implementation, "0x5af43d82803e903d91602b57fd5bf3", footer]);
}

/** Where the registry deploys the account: CREATE2 from the registry with the binding's salt (as ERC6551Registry.account). */
export function tokenBoundAddress(b: TokenBinding, contracts: TokenBoundContracts = serviceDeployment()): Address {
  const { tokenBoundRegistry, tokenBoundAccountImplementation } = contracts;
  const creationCode = concat(["0x3d60ad80600a3d3981f3", tokenBoundRuntimeCode(tokenBoundAccountImplementation, b)]);
  return getContractAddress({ opcode: "CREATE2", from: tokenBoundRegistry, salt: b.salt, bytecode: creationCode });
}

/** The registry call (and userOperation initCode) that deploys the account. */
export function tokenBoundDeployment(b: TokenBinding, contracts: TokenBoundContracts = serviceDeployment()) {
  const { tokenBoundRegistry: factory, tokenBoundAccountImplementation } = contracts;
  const data = encodeFunctionData({
    abi: erc6551RegistryAbi,
    functionName: "createAccount",
    args: [tokenBoundAccountImplementation, b.salt, BigInt(b.chainId), b.tokenContract, b.tokenId],
  });
  return { factory, data, initCode: concat([factory, data]) };
}

/**
 * For an initCode that calls our registry: state that makes the undeployed account look deployed (its proxy code;
 * it has no storage to set), so its call can be estimated before the initCode runs. Null for any other initCode.
 */
export function tokenBoundAccountState(sender: Address, initCode: Hex): StateOverride | null {
  const { tokenBoundRegistry, tokenBoundAccountImplementation } = serviceDeployment();
  if (size(initCode) < 24 || !isAddressEqual(slice(initCode, 0, 20), tokenBoundRegistry)) return null;
  const call = decodeFunctionData({ abi: erc6551RegistryAbi, data: slice(initCode, 20) });
  if (call.functionName !== "createAccount") return null;
  const [implementation, salt, chainId, tokenContract, tokenId] = call.args;
  if (!isAddressEqual(implementation, tokenBoundAccountImplementation)) return null;
  const code = tokenBoundRuntimeCode(implementation, { salt, chainId: Number(chainId), tokenContract, tokenId });
  return [{ address: sender, code }];
}

/** The token's holder, or null when `ownerOf` reverts (no such token, or burned) or answers nothing. */
export async function tokenHolder(chain: ChainConfig, tokenContract: Address, tokenId: bigint): Promise<Address | null> {
  try {
    return await publicClient(chain).readContract({ address: tokenContract, abi: erc721Abi, functionName: "ownerOf", args: [tokenId] });
  } catch (err) {
    if (err instanceof BaseError && err.walk((e) => e instanceof ContractFunctionRevertedError || e instanceof ContractFunctionZeroDataError)) return null;
    throw err;
  }
}

/**
 * What the holder signs for a token-bound account's EIP-1271 `isValidSignature(hash)`: the hash wrapped in the
 * account's own EIP-712 domain, so a holder's signature never validates for another account or chain.
 */
export const tokenBoundMessageDigest = (chainId: number, account: Address, hash: Hex) =>
  hashTypedData({
    domain: { name: "TokenBoundAccount", version: "1", chainId, verifyingContract: account },
    types: { AccountMessage: [{ name: "hash", type: "bytes32" }] },
    primaryType: "AccountMessage",
    message: { hash },
  });
