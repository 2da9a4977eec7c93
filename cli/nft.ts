import { concat, encodeDeployData, getContractAddress, parseEther, toHex, type Address } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { testNftAbi, testNftBytecode } from "@/contracts/artifacts";
import { publicClient, walletClient } from "@/lib/chain/clients";
import { CREATE2_DEPLOYER, DEPLOY_SALT } from "@/lib/chain/deployment";
import type { ChainConfig } from "@/lib/chain/registry";
import { tokenHolder } from "@/lib/chain/token-bound";

/** The development TestNFT, deployed through the CREATE2 deployer: the same address on every dev chain. */
const TEST_NFT_INIT_CODE = encodeDeployData({ abi: testNftAbi, bytecode: testNftBytecode, args: ["Test NFT", "TNFT"] });
export const TEST_NFT_ADDRESS: Address = getContractAddress({ opcode: "CREATE2", from: CREATE2_DEPLOYER, salt: DEPLOY_SALT, bytecode: TEST_NFT_INIT_CODE });

export interface MintedNft {
  chainId: number;
  tokenContract: Address;
  tokenId: string;
  holder: Address;
}

/**
 * Mints TestNFT `requested` (default: the lowest free id) to `to` on a development chain (deploying TestNFT first when missing), so a token-bound
 * (ERC6551V1) account can be tried locally. The sender is a fresh key funded with anvil_setBalance.
 */
export async function mintTestNft(chain: ChainConfig, to: Address, requested?: bigint): Promise<MintedNft> {
  if (!chain.dev) throw new Error(`Chain ${chain.chainId} is not a development chain: TestNFT is minted only on local chains.`);
  const client = publicClient(chain);
  const sender = privateKeyToAccount(generatePrivateKey());
  await client.request({ method: "anvil_setBalance" as never, params: [sender.address, toHex(parseEther("1"))] as never });
  const wallet = walletClient(chain, sender);
  const code = await client.getCode({ address: TEST_NFT_ADDRESS });
  if (!code || code === "0x") {
    const hash = await wallet.sendTransaction({ to: CREATE2_DEPLOYER, data: concat([DEPLOY_SALT, TEST_NFT_INIT_CODE]) });
    await client.waitForTransactionReceipt({ hash });
  }
  // Without a requested id, the lowest one not minted yet.
  let tokenId = requested ?? 1n;
  if (requested === undefined) while (await tokenHolder(chain, TEST_NFT_ADDRESS, tokenId)) tokenId++;
  const holder = await tokenHolder(chain, TEST_NFT_ADDRESS, tokenId);
  if (holder) throw new Error(`TestNFT token ${tokenId} exists already on chain ${chain.chainId} (held by ${holder}); pick another --token-id.`);
  const hash = await wallet.writeContract({ address: TEST_NFT_ADDRESS, abi: testNftAbi, functionName: "mint", args: [to, tokenId] });
  const receipt = await client.waitForTransactionReceipt({ hash });
  if (receipt.status !== "success") throw new Error(`Minting TestNFT ${tokenId} reverted (transaction ${hash})`);
  return { chainId: chain.chainId, tokenContract: TEST_NFT_ADDRESS, tokenId: tokenId.toString(), holder: to };
}

export const describeMint = (m: MintedNft) =>
  [
    `Minted TestNFT token ${m.tokenId} to ${m.holder} on chain ${m.chainId}.`,
    `Its token-bound account: POST /v1/accounts chainId=${m.chainId} accountType=ERC6551V1 tokenContract=${m.tokenContract} tokenId=${m.tokenId}`,
  ].join("\n");
