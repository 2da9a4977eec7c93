import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { parseEther, type Hex } from "viem";
import { testTokenAbi, testTokenBytecode } from "../contracts/artifacts";
import { api, baseUrl, expect, fundedWallet, rpcReceipt, screenshot, signIn, signUp, test, trackedPages } from "./fixtures";

test.describe.configure({ mode: "serial" });

const stamp = Date.now();
const carol = { name: "Carol Developer", email: `carol-${stamp}@example.com`, password: "a signing page passphrase", organization: "Carol Labs" };

/** What the serial tests share: the developer's key and the sponsored token mint they send. */
const state = { base: "", secret: "", token: "" as Hex, contractId: "", policyId: "" };
const openPage = trackedPages();

/** A sponsored mint from a fresh non-custodial account owned by `owner`: it awaits the owner's signature. */
async function awaitingIntent(owner: Hex) {
  const address = privateKeyToAccount(owner).address;
  const intent = await api(state.secret, "POST", "/v1/transaction_intents", {
    chainId: 31337,
    externalOwnerAddress: address,
    policy: state.policyId,
    interactions: [{ contract: state.contractId, functionName: "mint", functionArgs: [address, "1000"] }],
  });
  expect(intent.nextAction.type).toBe("sign_with_wallet");
  return intent as { id: string; userOperationHash: string; account: { id: string }; nextAction: { payload: { signingUrl: string } } };
}

test("setup: a developer's key, a registered token and a policy sponsoring its mint", async ({ browser }) => {
  const { page } = await openPage(browser);
  state.base = await signUp(page, carol);
  await page.goto(`${baseUrl()}${state.base}/keys`);
  await page.getByRole("button", { name: "Create secret key" }).click();
  state.secret = (await page.getByTestId("new-secret-key").textContent())!;
  expect(state.secret).toMatch(/^sk_test_/);

  const deployer = await fundedWallet();
  const hash = await deployer.deployContract({ abi: testTokenAbi, bytecode: testTokenBytecode, args: ["Gem", "GEM"] });
  state.token = (await rpcReceipt(hash)).contractAddress;
  const contract = await api(state.secret, "POST", "/v1/contracts", { name: "Gem token", chainId: 31337, address: state.token, abi: testTokenAbi });
  state.contractId = contract.id;
  const policy = await api(state.secret, "POST", "/v1/policies", { name: "Free gems", chainId: 31337, strategy: { sponsorSchema: "pay_for_user" } });
  state.policyId = policy.id;
  await api(state.secret, "POST", "/v1/policy_rules", { policy: policy.id, type: "contract_functions", contract: contract.id, functionName: "mint" });
});

test("the dashboard shows the signing link of an intent awaiting its owner's signature", async ({ browser }) => {
  const intent = await awaitingIntent(generatePrivateKey());
  expect(intent.nextAction.payload.signingUrl).toMatch(new RegExp(`^${baseUrl()}/sign/${intent.id}\\?t=`));
  const { page } = await openPage(browser);
  await signIn(page, carol, state.base);
  await page.goto(`${baseUrl()}${state.base}/intents/${intent.id}`);
  await expect(page.getByRole("heading", { name: "Awaiting the owner's signature" })).toBeVisible();
  const link = (await page.getByTestId("signing-link").textContent())!;
  expect(link).toMatch(new RegExp(`^${baseUrl()}/sign/${intent.id}\\?t=`));
  await expect(page.getByRole("button", { name: "Copy link" })).toBeVisible();
  await expect(page.getByRole("link", { name: "Open signing page" })).toHaveAttribute("href", link);
  // The dashboard's link opens the same intent on the signing page.
  await page.goto(link);
  await expect(page.getByRole("heading", { name: "Sign a transaction" })).toBeVisible();
});

test("the owner connects, signs, and watches the intent land", async ({ browser }) => {
  const ownerKey = generatePrivateKey();
  const owner = privateKeyToAccount(ownerKey);
  const intent = await awaitingIntent(ownerKey);
  const { page } = await openPage(browser, ownerKey);
  await page.goto(intent.nextAction.payload.signingUrl);
  await expect(page.getByRole("heading", { name: "Sign a transaction" })).toBeVisible();
  // What will be executed, read from the operation: the account's deployment, then the call with its contract and arguments; the owner, who pays.
  const account = await api(state.secret, "GET", `/v1/accounts/${intent.account.id}`);
  const calls = page.getByTestId("sign-calls");
  await expect(calls.getByTestId("sign-call")).toHaveCount(2);
  await expect(calls.getByTestId("sign-call").first()).toContainText(`Deploys your account (${account.address}), owned by ${owner.address}`);
  await expect(calls).toContainText("Calls mint on Gem token");
  await expect(calls).toContainText(`["${owner.address}","1000"]`);
  await expect(page.getByTestId("sign-owner")).toHaveText(owner.address);
  await expect(page.getByText("sponsored by the project (policy Free gems)")).toBeVisible();
  await expect(page.getByText(intent.userOperationHash)).toBeVisible();
  await screenshot(page, "40-sign");

  await page.getByRole("button", { name: "Connect wallet" }).click();
  await expect(page.getByTestId("sign-connected")).toHaveText(owner.address);
  await page.getByRole("button", { name: "Sign and send" }).click();
  await expect(page.getByTestId("sign-status")).toHaveText("successful", { timeout: 60_000 });
  const hash = (await page.getByTestId("sign-transaction").textContent()) as Hex;
  expect(hash).toMatch(/^0x[0-9a-f]{64}$/);
  await screenshot(page, "41-signed");

  expect((await rpcReceipt(hash)).status).toBe("0x1");
  const landed = await api(state.secret, "GET", `/v1/transaction_intents/${intent.id}`);
  expect(landed.response).toMatchObject({ status: 1, transactionHash: hash });
  expect(landed.nextAction).toBeUndefined();

  // The link has done its job: opened again, it says so.
  await page.reload();
  await expect(page.getByTestId("sign-not-awaiting")).toHaveText("This transaction intent no longer awaits a signature.");
  await expect(page.getByText(hash)).toBeVisible();
});

test("the page shows every call the operation carries: the service made guardian and the token charge, which the developer did not declare", async ({ browser }) => {
  const ownerKey = generatePrivateKey();
  const owner = privateKeyToAccount(ownerKey);
  const policy = await api(state.secret, "POST", "/v1/policies", {
    name: "Gems for gas",
    chainId: 31337,
    strategy: { sponsorSchema: "fixed_rate", tokenContract: state.contractId, tokenContractAmount: parseEther("5").toString() },
  });
  await api(state.secret, "POST", "/v1/policy_rules", { policy: policy.id, type: "contract_functions", contract: state.contractId, functionName: "mint" });
  const account = await api(state.secret, "POST", "/v1/accounts", { chainId: 31337, externalOwnerAddress: owner.address, defaultGuardian: true });
  const minter = await fundedWallet();
  await rpcReceipt(await minter.writeContract({ address: state.token, abi: testTokenAbi, functionName: "mint", args: [account.address, parseEther("12")] }));
  const intent = await api(state.secret, "POST", "/v1/transaction_intents", {
    chainId: 31337,
    account: account.id,
    policy: policy.id,
    interactions: [{ contract: state.contractId, functionName: "mint", functionArgs: [owner.address, "1000"] }],
  });
  // The collecting developer account the charge is paid to, created by the first token-charging intent.
  const collector = (await api(state.secret, "GET", "/v1/settings/developer_accounts")).data[0].address as string;

  const { page } = await openPage(browser, ownerKey);
  await page.goto(intent.nextAction.payload.signingUrl);
  const calls = page.getByTestId("sign-calls").getByTestId("sign-call");
  await expect(calls).toHaveCount(3);
  // The factory deploys the account with the service as guardian: one step.
  await expect(calls.nth(0)).toHaveAttribute("data-kind", "deployment");
  await expect(calls.nth(0)).toContainText(`Deploys your account (${account.address}), owned by ${owner.address}, with the service (`);
  await expect(calls.nth(0)).toContainText(/with the service \(0x[0-9a-fA-F]{40}\) as guardian: it can help recover the account if you lose your key/);
  await expect(calls.nth(1)).toContainText("Calls mint on Gem token");
  await expect(calls.nth(2)).toHaveAttribute("data-kind", "token_charge");
  await expect(calls.nth(2)).toContainText(`Pays 5 GEM to the project (${collector}) for gas`);
  // The developer declared one interaction; the page says the steps above are what is signed.
  await expect(page.getByTestId("sign-interactions")).toContainText("As the developer described it (1 interaction)");
  await screenshot(page, "43-sign-guardian-charge");
});

test("a wallet that is not the owner is refused with a clear message", async ({ browser }) => {
  const ownerKey = generatePrivateKey();
  const intent = await awaitingIntent(ownerKey);
  const strangerKey = generatePrivateKey();
  const { page } = await openPage(browser, strangerKey);
  await page.goto(intent.nextAction.payload.signingUrl);
  await page.getByRole("button", { name: "Connect wallet" }).click();
  await expect(page.getByTestId("sign-connected")).toHaveText(privateKeyToAccount(strangerKey).address);
  await expect(page.getByTestId("sign-wrong-wallet")).toContainText(`is not the owner of this account. Switch your wallet to the owner, ${privateKeyToAccount(ownerKey).address}`);
  await expect(page.getByRole("button", { name: "Sign and send" })).toHaveCount(0);
  const still = await api(state.secret, "GET", `/v1/transaction_intents/${intent.id}`);
  expect(still.nextAction.type).toBe("sign_with_wallet");
});

test("an altered or missing token shows a page saying the link does not work", async ({ browser }) => {
  const intent = await awaitingIntent(generatePrivateKey());
  const url = new URL(intent.nextAction.payload.signingUrl);
  const token = url.searchParams.get("t")!;
  url.searchParams.set("t", `${token.slice(0, -4)}${token.endsWith("AAAA") ? "BBBB" : "AAAA"}`);
  const { page } = await openPage(browser);
  const res = await page.goto(url.toString());
  expect(res!.status()).toBe(200);
  await expect(page.getByRole("heading", { name: "This signing link does not work" })).toBeVisible();
  await expect(page.getByTestId("sign-invalid")).toContainText("not valid");
  await expect(page.getByRole("button", { name: "Connect wallet" })).toHaveCount(0);
  await screenshot(page, "42-sign-invalid");
  await page.goto(`${baseUrl()}/sign/${intent.id}`);
  await expect(page.getByTestId("sign-invalid")).toContainText("not valid");
  // The token of one intent does not open another.
  const other = await awaitingIntent(generatePrivateKey());
  await page.goto(`${baseUrl()}/sign/${intent.id}?t=${new URL(other.nextAction.payload.signingUrl).searchParams.get("t")}`);
  await expect(page.getByTestId("sign-invalid")).toContainText("belongs to another transaction intent");
});
