import {
  concat,
  decodeFunctionData,
  encodeAbiParameters,
  encodeFunctionData,
  getContractAddress,
  hashTypedData,
  isAddressEqual,
  keccak256,
  size,
  slice,
  toHex,
  type Address,
  type Hex,
} from "viem";
import { accountFactoryAbi, erc1967ProxyBytecode, smartAccountAbi } from "@/contracts/artifacts";
import { serviceAccount } from "@/lib/keys/service-keys";
import { accountFactoryCallV08, counterfactualAddressV08 } from "./accounts-v08";
import { publicClient } from "./clients";
import { serviceDeployment } from "./contracts";
import { accountCreate2Salt } from "./deployment";
import { managedAccountAddress, managedFactoryCall } from "./managed";
import type { ChainConfig } from "./registry";
import { tokenBindingOf, tokenBoundAddress, tokenBoundDeployment } from "./token-bound";

/** The factory salt of a player's account: the same on every chain, so its address is too. */
export const accountSalt = (playerId: string): Hex => keccak256(toHex(`player:${playerId}`));

/**
 * The guardian an account's deployment builds in: the service's guardian key for accounts created with
 * defaultGuardian (so initCode alone deploys them recoverable), none otherwise. Part of the account's address.
 */
export const builtInGuardian = (account: { defaultGuardian: boolean }): Address | null =>
  account.defaultGuardian ? serviceAccount("guardian").address : null;

/** The address the factory will deploy the account at (CREATE2 of an ERC1967 proxy to our implementation). */
export function counterfactualAddress(owner: Address, salt: Hex, guardian: Address | null = null): Address {
  const { accountFactory, accountImplementation } = serviceDeployment();
  const proxyInitCode = concat([
    erc1967ProxyBytecode,
    encodeAbiParameters([{ type: "address" }, { type: "bytes" }], [accountImplementation, "0x"]),
  ]);
  return getContractAddress({ opcode: "CREATE2", from: accountFactory, salt: accountCreate2Salt(owner, salt, guardian), bytecode: proxyInitCode });
}

/** The userOperation `initCode` (and ERC-6492 factory data) that deploys the account, with `guardian` when given. */
export function accountFactoryCall(owner: Address, salt: Hex, guardian: Address | null = null) {
  const factory = serviceDeployment().accountFactory;
  const data = guardian
    ? encodeFunctionData({ abi: accountFactoryAbi, functionName: "createAccountWithGuardian", args: [owner, guardian, salt] })
    : encodeFunctionData({ abi: accountFactoryAbi, functionName: "createAccount", args: [owner, salt] });
  return { factory, data, initCode: concat([factory, data]) };
}

/** What an initCode calling our AccountFactory deploys: its owner, built-in guardian and salt; null for any other initCode. */
export function accountFactoryInitCode(initCode: Hex): { owner: Address; guardian: Address | null; salt: Hex } | null {
  if (size(initCode) < 24 || !isAddressEqual(slice(initCode, 0, 20), serviceDeployment().accountFactory)) return null;
  try {
    const call = decodeFunctionData({ abi: accountFactoryAbi, data: slice(initCode, 20) });
    if (call.functionName === "createAccount") return { owner: call.args[0], guardian: null, salt: call.args[1] };
    if (call.functionName === "createAccountWithGuardian") return { owner: call.args[0], guardian: call.args[1], salt: call.args[2] };
  } catch {
    // not a factory call we know
  }
  return null;
}

/**
 * What decides a recorded account's address and deployment (a player's account row or an intent's sender). The
 * fields past `defaultGuardian` matter to some types only: `projectId` for ManagedV5 (the project's beacon),
 * `chainId`, `tokenContract` and `tokenId` for ERC6551V1 (the token that controls it).
 */
export interface DeployableAccount {
  accountType: string;
  ownerAddress: string;
  salt: string;
  defaultGuardian: boolean;
  projectId: string;
  chainId: number;
  tokenContract: string | null;
  tokenId: string | null;
}

/** The factory call (and userOperation initCode) that deploys a recorded account, by its type. */
export function deploymentOf(account: DeployableAccount): { factory: Address; data: Hex; initCode: Hex } {
  switch (account.accountType) {
    case "UpgradeableV5":
      return accountFactoryCall(account.ownerAddress as Address, account.salt as Hex, builtInGuardian(account));
    case "ManagedV5":
      return managedFactoryCall(account.projectId, account.ownerAddress as Address, account.salt as Hex, builtInGuardian(account));
    case "ERC6551V1":
      return tokenBoundDeployment(tokenBindingOf(account));
    case "UpgradeableV8":
      return accountFactoryCallV08(account.ownerAddress as Address, account.salt as Hex, builtInGuardian(account));
    default:
      // DelegatedV8: an EOA, nothing to deploy (its first operation carries an EIP-7702 authorization instead).
      throw new Error(`no deployment for account type ${account.accountType}`);
  }
}

/** Where a recorded account lives (the same on every chain for the same inputs), by its type. */
export function accountAddressOf(account: DeployableAccount): Address {
  switch (account.accountType) {
    case "UpgradeableV5":
      return counterfactualAddress(account.ownerAddress as Address, account.salt as Hex, builtInGuardian(account));
    case "ManagedV5":
      return managedAccountAddress(account.projectId, account.ownerAddress as Address, account.salt as Hex, builtInGuardian(account));
    case "ERC6551V1":
      return tokenBoundAddress(tokenBindingOf(account));
    case "UpgradeableV8":
      return counterfactualAddressV08(account.ownerAddress as Address, account.salt as Hex, builtInGuardian(account));
    case "DelegatedV8":
      // The owner's EOA is the account.
      return account.ownerAddress as Address;
    default:
      throw new Error(`no address for account type ${account.accountType}`);
  }
}

export interface AccountChainState {
  deployed: boolean;
  owner: Address | null;
  pendingOwner: Address | null;
}

export async function readAccountState(chain: ChainConfig, address: Address): Promise<AccountChainState> {
  const client = publicClient(chain);
  const code = await client.getCode({ address });
  if (!code || code === "0x") return { deployed: false, owner: null, pendingOwner: null };
  const [owner, pendingOwner] = await Promise.all([
    client.readContract({ address, abi: smartAccountAbi, functionName: "owner" }),
    client.readContract({ address, abi: smartAccountAbi, functionName: "pendingOwner" }),
  ]);
  const zero = /^0x0{40}$/i;
  return { deployed: true, owner, pendingOwner: zero.test(pendingOwner) ? null : pendingOwner };
}

/**
 * What the owner signs for the account's EIP-1271 `isValidSignature(hash)`: the hash wrapped in
 * the account's own EIP-712 domain, so one owner's signature never validates for another
 * account or chain.
 */
export const accountMessageDigest = (chainId: number, account: Address, hash: Hex) =>
  hashTypedData({
    domain: { name: "SmartAccount", version: "1", chainId, verifyingContract: account },
    types: { AccountMessage: [{ name: "hash", type: "bytes32" }] },
    primaryType: "AccountMessage",
    message: { hash },
  });
