import { getAddress, isAddress, isAddressEqual, parseAbi, type Address, type Hex } from "viem";
import { onChain, publicClient } from "@/lib/chain/clients";
import { findChain, type ChainConfig } from "@/lib/chain/registry";
import { tokenBindingOf, tokenHolder } from "@/lib/chain/token-bound";
import { activeContractOn } from "@/lib/contracts/service";
import type { Queryable } from "@/lib/db/client";
import { ApiError, badRequest } from "@/lib/errors";
import { findOwnerKey, type OwnerKeyRow } from "@/lib/keys/custodial";
import type { ProjectContext } from "@/lib/tenant";

/** ERC-165 id of ERC-721: what a token contract must declare to control an ERC6551V1 account. */
export const ERC721_INTERFACE_ID: Hex = "0x80ac58cd";

const erc165Abi = parseAbi(["function supportsInterface(bytes4 interfaceId) view returns (bool)"]);

/** What decides who controls a recorded account (the columns of an account row it needs). */
interface ControlledAccount {
  id: string;
  accountType: string;
  chainId: number;
  playerId: string;
  salt: string;
  ownerAddress: string;
  tokenContract: string | null;
  tokenId: string | null;
}

export interface CheckedToken {
  tokenContract: Address;
  /** Decimal. */
  tokenId: string;
  /** The token's holder now: the account's controller. */
  holder: Address;
}

/**
 * The token an ERC6551V1 account is created for, checked on its chain: `tokenContract` (an address or a registered
 * contract's con_ id) has code and declares ERC-721, and `tokenId` exists (ownerOf answers). Each failure is a 400
 * naming the parameter.
 */
export async function checkToken(
  db: Queryable,
  ctx: ProjectContext,
  chain: ChainConfig,
  input: { tokenContract?: string; tokenId?: string },
): Promise<CheckedToken> {
  const missing = (["tokenContract", "tokenId"] as const).filter((field) => input[field] === undefined);
  if (missing.length) {
    throw badRequest(`An ERC6551V1 account needs the ERC-721 token that controls it: ${missing.join(" and ")} ${missing.length > 1 ? "are" : "is"} required.`, Object.fromEntries(missing.map((field) => [field, { message: "required for accountType ERC6551V1" }])));
  }
  const tokenId = input.tokenId!;
  const tokenContract = await tokenContractAddress(db, ctx, chain, input.tokenContract!);
  const detail = { value: input.tokenContract };
  const code = await onChain(chain, () => publicClient(chain).getCode({ address: tokenContract }));
  if (!code || code === "0x") {
    throw badRequest(`tokenContract ${tokenContract} has no code on chain ${chain.chainId}: it must be an ERC-721 contract there, not a wallet address.`, {
      tokenContract: { ...detail, message: `no contract on chain ${chain.chainId}` },
    });
  }
  if (!(await supportsErc721(chain, tokenContract))) {
    throw badRequest(`tokenContract ${tokenContract} is not an ERC-721 contract: it does not answer supportsInterface(${ERC721_INTERFACE_ID}) with true.`, {
      tokenContract: { ...detail, message: "not an ERC-721 contract" },
    });
  }
  const holder = await onChain(chain, () => tokenHolder(chain, tokenContract, BigInt(tokenId)));
  if (!holder) {
    throw badRequest(`Token ${tokenId} of ${tokenContract} does not exist on chain ${chain.chainId} (ownerOf reverts): mint it first.`, {
      tokenId: { value: tokenId, message: "no such token" },
    });
  }
  return { tokenContract, tokenId, holder };
}

async function tokenContractAddress(db: Queryable, ctx: ProjectContext, chain: ChainConfig, value: string): Promise<Address> {
  if (value.startsWith("con_")) return getAddress((await activeContractOn(db, ctx, value, chain.chainId, "tokenContract")).address);
  if (isAddress(value, { strict: false })) return getAddress(value);
  throw badRequest(`tokenContract ${value} is neither an address nor a contract id (con_...).`, {
    tokenContract: { value, message: "Expected a 0x-prefixed 20-byte hex address or a contract id (con_...)" },
  });
}

async function supportsErc721(chain: ChainConfig, address: Address): Promise<boolean> {
  try {
    return await onChain(chain, () => publicClient(chain).readContract({ address, abi: erc165Abi, functionName: "supportsInterface", args: [ERC721_INTERFACE_ID] }));
  } catch (err) {
    if (err instanceof ApiError) throw err; // the node did not answer (502)
    // Reverts or answers nothing: no ERC-165, so not an ERC-721 we can trust.
    return false;
  }
}

/**
 * Who signs for the account now: for ERC6551V1 the token's current holder (read from the chain: control follows the
 * token), else its recorded owner. A token that no longer exists is a 400: nobody can sign.
 */
export async function signingOwner(account: ControlledAccount): Promise<Address> {
  if (account.accountType !== "ERC6551V1") return getAddress(account.ownerAddress);
  const chain = findChain(account.chainId);
  if (!chain) throw badRequest(`Chain ${account.chainId} of account ${account.id} is not configured any more.`);
  const holder = await currentHolder(chain, account);
  if (!holder) {
    throw badRequest(`Account ${account.id} has no holder: token ${account.tokenId} of ${account.tokenContract} no longer exists on chain ${account.chainId}.`);
  }
  return holder;
}

/** The holder of an ERC6551V1 account's token, or null when it no longer exists. */
export async function currentHolder(chain: ChainConfig, account: ControlledAccount): Promise<Address | null> {
  const b = tokenBindingOf(account);
  return onChain(chain, () => tokenHolder(chain, b.tokenContract, b.tokenId));
}

/** The player's owner key when it is `holder` (the service then signs for the token-bound account), else undefined. */
export async function custodialKeyOf(db: Queryable, playerId: string, holder: Address | null): Promise<OwnerKeyRow | undefined> {
  if (!holder) return undefined;
  const key = await findOwnerKey(db, playerId);
  return key && isAddressEqual(key.address as Address, holder) ? key : undefined;
}

/** The owner key that signs a token-bound account's operations now (the holder is the player's key), if any. */
export async function tokenBoundSigner(db: Queryable, account: ControlledAccount): Promise<OwnerKeyRow | undefined> {
  const chain = findChain(account.chainId);
  if (!chain) return undefined;
  const holder = await currentHolder(chain, account);
  return custodialKeyOf(db, account.playerId, holder);
}
