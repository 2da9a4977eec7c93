import { getAbiItem, parseEther, toHex, type Address, type Hex } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { entryPointAbi } from "@/contracts/artifacts";
import { publicClient, walletClient } from "@/lib/chain/clients";
import { serviceDeployment } from "@/lib/chain/contracts";
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

/** The EntryPoint's UserOperationEvents for one op hash: one per time the op ran on chain. */
export const userOperationEvents = (userOpHash: Hex, chainId = 31337) =>
  clientOf(chainId).getLogs({
    address: serviceDeployment().entryPoint,
    event: getAbiItem({ abi: entryPointAbi, name: "UserOperationEvent" }),
    args: { userOpHash },
    fromBlock: 0n,
    toBlock: "latest",
  });

/**
 * What the EntryPoint recorded for `sender` from `fromBlock` on: its UserOperationEvents (one per
 * op executed, whatever the bundle) and the Deposited events naming it (what depositTo(sender) did).
 */
export async function entryPointHistory(chainId: number, sender: Address, fromBlock: bigint) {
  const client = clientOf(chainId);
  const address = serviceDeployment().entryPoint;
  const [operations, deposits] = await Promise.all([
    client.getLogs({ address, event: getAbiItem({ abi: entryPointAbi, name: "UserOperationEvent" }), args: { sender }, fromBlock, toBlock: "latest" }),
    client.getLogs({ address, event: getAbiItem({ abi: entryPointAbi, name: "Deposited" }), args: { account: sender }, fromBlock, toBlock: "latest" }),
  ]);
  const timesByHash = new Map<Hex, number>();
  for (const log of operations) timesByHash.set(log.args.userOpHash!, (timesByHash.get(log.args.userOpHash!) ?? 0) + 1);
  return { operations: operations.map((log) => log.args), timesByHash, deposits: deposits.length };
}
