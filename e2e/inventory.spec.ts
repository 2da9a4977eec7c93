import { parseEther, toHex, type Abi, type Address, type Hex } from "viem";
import { testNftAbi, testNftBytecode, testTokenAbi, testTokenBytecode } from "../contracts/artifacts";
import { api, baseUrl, expect, fundedWallet, rpc, rpcReceipt, screenshot, signUp, test, trackedPages } from "./fixtures";

test.describe.configure({ mode: "serial" });

const stamp = Date.now();
const ivy = { name: "Ivy Inventory", email: `ivy-${stamp}@example.com`, password: "an inventory passphrase", organization: "Ivy Games" };
const openPage = trackedPages();

test("a player's and an account's pages show what the account holds: native coin, tokens and NFTs", async ({ browser }) => {
  const { page } = await openPage(browser);
  const base = await signUp(page, ivy);
  await page.goto(`${baseUrl()}${base}/keys`);
  await page.getByRole("button", { name: "Create secret key" }).click();
  const secret = (await page.getByTestId("new-secret-key").textContent())!;

  const wallet = await fundedWallet();
  const deploy = async (abi: Abi, bytecode: Hex, args: unknown[]) => (await rpcReceipt(await wallet.deployContract({ abi, bytecode, args }))).contractAddress as Address;
  const token = await deploy(testTokenAbi as Abi, testTokenBytecode, ["Gold", "GLD"]);
  const nft = await deploy(testNftAbi as Abi, testNftBytecode, ["Heroes", "HERO"]);
  await api(secret, "POST", "/v1/contracts", { name: "Gold", chainId: 31337, address: token, abi: testTokenAbi });
  await api(secret, "POST", "/v1/contracts", { name: "Heroes", chainId: 31337, address: nft, abi: testNftAbi });
  const player = await api(secret, "POST", "/v1/players", { name: "Collector" });
  const account = await api(secret, "POST", "/v1/accounts", { chainId: 31337, player: player.id });
  await rpc("anvil_setBalance", [account.address, toHex(parseEther("2"))]);
  await rpcReceipt(await wallet.writeContract({ address: token, abi: testTokenAbi, functionName: "mint", args: [account.address, 1234n] }));
  await rpcReceipt(await wallet.writeContract({ address: nft, abi: testNftAbi, functionName: "mint", args: [account.address, 42n] }));

  await page.goto(`${baseUrl()}${base}/players/${player.id}`);
  const inventory = page.getByTestId("inventory-31337");
  await expect(inventory).toContainText("Native: 2 ETH");
  await expect(inventory.getByRole("row").filter({ hasText: "1234" })).toHaveCount(1);
  await expect(inventory.getByRole("row").filter({ hasText: "ERC721" })).toContainText("42");
  await screenshot(page, "70-player-inventory");

  await page.goto(`${baseUrl()}${base}/accounts/${account.id}`);
  await expect(page.getByTestId("inventory-31337")).toContainText("Native: 2 ETH");
  await expect(page.getByTestId("inventory-31337").getByRole("row").filter({ hasText: "ERC721" })).toContainText("42");
});
