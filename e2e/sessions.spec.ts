import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import type { Hex } from "viem";
import { smartAccountV2ExampleAbi, smartAccountV2ExampleBytecode } from "../contracts/artifacts";
import { api, baseUrl, expect, fundedWallet, rpc, rpcReceipt, screenshot, signIn, signUp, test, trackedPages } from "./fixtures";

const ENTRY_POINT = "0x5FF137D4b0FDCD49DcA30c7CF57E578a026d2789";

test.describe.configure({ mode: "serial" });

const stamp = Date.now();
const dana = { name: "Dana Developer", email: `dana-${stamp}@example.com`, password: "a session keys passphrase", organization: "Dana Games" };

const state = { base: "", secret: "", policyId: "" };
const openPage = trackedPages();

/** The chain's clock: session windows are checked against it, not the machine's. */
const chainNow = async () => Number(BigInt((await rpc<{ timestamp: Hex }>("eth_getBlockByNumber", ["latest", false])).timestamp));

test("setup: a developer's key and a policy sponsoring calls of accounts to themselves", async ({ browser }) => {
  const { page } = await openPage(browser);
  state.base = await signUp(page, dana);
  await page.goto(`${baseUrl()}${state.base}/keys`);
  await page.getByRole("button", { name: "Create secret key" }).click();
  state.secret = (await page.getByTestId("new-secret-key").textContent())!;
  const policy = await api(state.secret, "POST", "/v1/policies", { name: "Account upkeep", chainId: 31337, strategy: { sponsorSchema: "pay_for_user" } });
  state.policyId = policy.id;
  await api(state.secret, "POST", "/v1/policy_rules", { policy: policy.id, type: "account_functions" });
});

test("the owner registers a session key on the signing page, and the dashboard revokes it", async ({ browser }) => {
  const ownerKey = generatePrivateKey();
  const owner = privateKeyToAccount(ownerKey);
  const sessionKey = privateKeyToAccount(generatePrivateKey()).address;
  const player = await api(state.secret, "POST", "/v1/players", { name: "Session player" });
  const now = await chainNow();
  const session = await api(state.secret, "POST", "/v1/sessions", {
    player: player.id,
    chainId: 31337,
    address: sessionKey,
    externalOwnerAddress: owner.address,
    validAfter: now,
    validUntil: now + 7200,
    limit: 5,
    policy: state.policyId,
  });
  expect(session).toMatchObject({ object: "session", isActive: false, nextAction: { type: "sign_with_wallet" } });

  // The signing page says in words what the owner allows.
  const { page } = await openPage(browser, ownerKey);
  await page.goto(session.nextAction.payload.signingUrl);
  await expect(page.getByRole("heading", { name: "Sign a transaction" })).toBeVisible();
  await expect(page.getByTestId("sign-calls")).toContainText(`Lets the session key ${sessionKey} sign for your account`);
  await expect(page.getByTestId("sign-calls")).toContainText("at most 5 operations");
  // Registered without maxFeePerOp: the key may never make the account pay its gas.
  await expect(page.getByTestId("sign-calls")).toContainText("only when a sponsor pays their fees");
  await screenshot(page, "50-sign-session");
  await page.getByRole("button", { name: "Connect wallet" }).click();
  await expect(page.getByTestId("sign-connected")).toHaveText(owner.address);
  await page.getByRole("button", { name: "Sign and send" }).click();
  await expect(page.getByTestId("sign-status")).toHaveText("successful", { timeout: 60_000 });
  await expect.poll(async () => (await api(state.secret, "GET", `/v1/sessions/${session.id}`)).isActive, { timeout: 30_000 }).toBe(true);

  // The account's page lists the key as active, with its uses, and revokes it.
  const account = (await api(state.secret, "GET", `/v1/accounts?player=${player.id}`)).data[0];
  const { page: dashboard } = await openPage(browser);
  await signIn(dashboard, dana, state.base);
  await dashboard.goto(`${baseUrl()}${state.base}/accounts/${account.id}`);
  const row = dashboard.getByRole("row").filter({ hasText: sessionKey.slice(0, 8) });
  await expect(row).toContainText("active");
  await expect(row).toContainText("5 of 5");
  await expect(row).toContainText("sponsored only");
  await screenshot(dashboard, "51-account-sessions");
  dashboard.on("dialog", (dialog) => void dialog.accept());
  await row.getByLabel("Paid by").selectOption(state.policyId);
  await row.getByRole("button", { name: "Revoke" }).click();
  // An owner-held account: the revocation waits for the owner's signature.
  await expect(row).toContainText("revoking");
  const revoking = await api(state.secret, "GET", `/v1/sessions/${session.id}`);
  expect(revoking.nextAction.type).toBe("sign_with_wallet");
  const signature = await owner.signMessage({ message: { raw: revoking.nextAction.payload.userOperationHash } });
  await api(state.secret, "POST", `/v1/sessions/${session.id}/signature`, { signature, optimistic: true });
  await expect.poll(async () => (await api(state.secret, "GET", `/v1/sessions/${session.id}`)).isActive, { timeout: 30_000 }).toBe(false);
  await dashboard.reload();
  await expect(dashboard.getByRole("row").filter({ hasText: sessionKey.slice(0, 8) })).toContainText("revoked");
});

test("a developer creates a managed account from the player's page and upgrades the project's managed accounts", async ({ browser }) => {
  const player = await api(state.secret, "POST", "/v1/players", { name: "Managed player" });
  const { page } = await openPage(browser);
  await signIn(page, dana, state.base);
  await page.goto(`${baseUrl()}${state.base}/players/${player.id}`);
  await page.getByLabel("Type", { exact: true }).selectOption("ManagedV5");
  await page.getByRole("button", { name: "Create account" }).click();
  await expect.poll(async () => (await api(state.secret, "GET", `/v1/accounts?player=${player.id}`)).data.length, { timeout: 20_000 }).toBe(1);
  const account = (await api(state.secret, "GET", `/v1/accounts?player=${player.id}`)).data[0];
  expect(account.accountType).toBe("Managed_v06");
  // Deployed by a sponsored deployment (an account_functions rule: the setup's policy).
  expect((await api(state.secret, "POST", `/v1/accounts/${account.id}/deploy`, { policy: state.policyId })).deployed).toBe(true);

  // A new implementation (the example V2) deployed by someone, then the upgrade from the dashboard.
  const deployer = await fundedWallet();
  const v2 = (await rpcReceipt(await deployer.deployContract({ abi: smartAccountV2ExampleAbi, bytecode: smartAccountV2ExampleBytecode, args: [ENTRY_POINT] }))).contractAddress as Hex;
  await page.goto(`${baseUrl()}${state.base}/accounts/managed`);
  await expect(page.getByRole("heading", { level: 1, name: "Managed accounts" })).toBeVisible();
  const card = page.locator("div.space-y-4").filter({ has: page.getByTestId("implementation-31337") });
  page.on("dialog", (dialog) => void dialog.accept());
  await card.getByLabel("New implementation").fill(v2);
  await card.getByRole("button", { name: "Upgrade all managed accounts" }).click();
  await expect(page.getByTestId("upgrade-transaction")).toHaveText(/^0x[0-9a-f]{64}$/);
  await screenshot(page, "52-managed-upgrade");
  const version = await rpc<Hex>("eth_call", [{ to: account.address, data: "0x54fd4d50" }, "latest"]);
  expect(BigInt(version)).toBe(2n);
});
