// The price feed of development chains: our TestPriceFeed (a Chainlink-style AggregatorV3Interface anyone may set),
// deployed when a dev chain is prepared, at the same CREATE2 address on every chain and installation, so the native
// coin has a USD price out of the box (lib/sponsorship/prices) and tests can move it with setAnswer.
import { concat, encodeDeployData, getContractAddress, parseUnits, type Account, type Address, type Chain, type PublicClient, type Transport, type WalletClient } from "viem";
import { testPriceFeedAbi, testPriceFeedBytecode } from "@/contracts/artifacts";
import { CREATE2_DEPLOYER, DEPLOY_SALT } from "./deployment";

/** The local feed's digits (Chainlink's USD feeds use 8) and first answer (round 1, at deployment): 2000 USD. */
export const LOCAL_PRICE_FEED = { decimals: 8, description: "ETH / USD (local)", initialUsd: "2000" } as const;

let memo: { initCode: `0x${string}`; address: Address } | undefined;

function plan() {
  if (memo) return memo;
  const initCode = encodeDeployData({
    abi: testPriceFeedAbi,
    bytecode: testPriceFeedBytecode,
    args: [LOCAL_PRICE_FEED.decimals, LOCAL_PRICE_FEED.description, parseUnits(LOCAL_PRICE_FEED.initialUsd, LOCAL_PRICE_FEED.decimals)],
  });
  memo = { initCode, address: getContractAddress({ opcode: "CREATE2", from: CREATE2_DEPLOYER, salt: DEPLOY_SALT, bytecode: initCode }) };
  return memo;
}

/** Where the development chains' price feed lives (deployed or not): the same address on every chain. */
export const localPriceFeed = (): Address => plan().address;

async function hasCode(client: PublicClient, address: Address) {
  const code = await client.getCode({ address });
  return code !== undefined && code !== "0x";
}

/**
 * Deploys the local price feed through the CREATE2 deployer when it is missing; true when this call deployed it.
 * Only for development chains (anyone may set its answer). A feed someone else deployed meanwhile counts as present.
 */
export async function ensureLocalPriceFeed(client: PublicClient, wallet: WalletClient<Transport, Chain | undefined, Account>): Promise<boolean> {
  const { initCode, address } = plan();
  if (await hasCode(client, address)) return false;
  try {
    const hash = await wallet.sendTransaction({ account: wallet.account, chain: wallet.chain, to: CREATE2_DEPLOYER, data: concat([DEPLOY_SALT, initCode]) });
    const receipt = await client.waitForTransactionReceipt({ hash });
    if (receipt.status !== "success") throw new Error(`Deploying TestPriceFeed reverted (transaction ${hash})`);
  } catch (err) {
    // Another process preparing the chain may have deployed it first: the CREATE2 address is the same.
    if (await hasCode(client, address)) return false;
    throw err;
  }
  if (!(await hasCode(client, address))) throw new Error(`Deploying TestPriceFeed left no code at ${address}`);
  return true;
}
