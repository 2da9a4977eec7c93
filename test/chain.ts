import { parseEther, toHex, type Hex } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { publicClient, walletClient } from "@/lib/chain/clients";
import { findChain } from "@/lib/chain/registry";

export const chainOf = (chainId: number) => findChain(chainId)!;

export const clientOf = (chainId: number) => publicClient(chainOf(chainId));

/** A fresh key with 100 ETH on the test chain (so test files never share a nonce). */
export async function fundedWallet(chainId: number, privateKey: Hex = generatePrivateKey()) {
  const account = privateKeyToAccount(privateKey);
  await clientOf(chainId).request({ method: "anvil_setBalance" as never, params: [account.address, toHex(parseEther("100"))] as never });
  return walletClient(chainOf(chainId), account);
}

/** Sends a transaction and waits for its successful receipt. */
export async function mined(chainId: number, hash: Hex) {
  const receipt = await clientOf(chainId).waitForTransactionReceipt({ hash });
  if (receipt.status !== "success") throw new Error(`transaction ${hash} reverted`);
  return receipt;
}
