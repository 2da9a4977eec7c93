/**
 * Helpers for the lib/chain tests (userOps on the test anvils): fresh owners and counterfactual accounts, ops built,
 * sponsored and signed the way the service does it.
 */
import { parseEther, toHex, type Address, type Hex, type PrivateKeyAccount } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { accountFactoryCall, counterfactualAddress } from "./accounts";
import { publicClient } from "./clients";
import type { ChainConfig } from "./registry";
import {
  buildUserOperation,
  signUserOperation,
  sponsorshipWindow,
  sponsorUserOperation,
  type BuildUserOperationParams,
  type UserOp,
} from "./userop";

export interface TestAccount {
  owner: PrivateKeyAccount;
  salt: Hex;
  address: Address;
  initCode: Hex;
}

/** A fresh owner's counterfactual account (not deployed). */
export function freshAccount(): TestAccount {
  const owner = privateKeyToAccount(generatePrivateKey());
  const salt = generatePrivateKey();
  return { owner, salt, address: counterfactualAddress(owner.address, salt), initCode: accountFactoryCall(owner.address, salt).initCode };
}

export async function setBalance(chain: ChainConfig, address: Address, value: bigint = parseEther("1")) {
  await publicClient(chain).request({ method: "anvil_setBalance" as never, params: [address, toHex(value)] as never });
}

/** Builds the op for `account` (initCode until it has code), sponsors it when asked, and signs it with `signer` (default the owner). */
export async function signedOp(
  chain: ChainConfig,
  account: TestAccount,
  params: Omit<BuildUserOperationParams, "sender" | "initCode" | "sponsorship">,
  signer: PrivateKeyAccount = account.owner,
): Promise<UserOp> {
  let op = await buildUserOperation(chain, { ...params, sender: account.address, initCode: account.initCode });
  if (params.sponsored) op = await sponsorUserOperation(chain, op, await sponsorshipWindow(chain, 3_600));
  return signUserOperation(chain, op, signer);
}
