import { api, baseUrl, expect, openSection, pageAlert, screenshot, signIn, signUp, test, trackedPages } from "./fixtures";

const ENTRY_POINT = "0x5FF137D4b0FDCD49DcA30c7CF57E578a026d2789";

test.describe.configure({ mode: "serial" });

const stamp = Date.now();
const pat = { name: "Pat Paymaster", email: `pat-${stamp}@example.com`, password: "a paymasters passphrase", organization: "Pat Games" };
const state = { base: "", secret: "", rulesPolicy: "", entryPoint: "", paymaster: "", policy: "" };
const openPage = trackedPages();

const depositRule = (policy: string) => api(state.secret, "POST", "/v1/policy_rules", { policy, type: "contract_functions", contract: state.entryPoint, functionName: "depositTo" });

test("setup: a developer's key, the EntryPoint as a contract and a policy whose rules our ERC-7677 service applies", async ({ browser }) => {
  const { page } = await openPage(browser);
  state.base = await signUp(page, pat);
  await page.goto(`${baseUrl()}${state.base}/keys`);
  await page.getByRole("button", { name: "Create secret key" }).click();
  state.secret = (await page.getByTestId("new-secret-key").textContent())!;
  const abi = [{ type: "function", name: "depositTo", stateMutability: "payable", inputs: [{ name: "account", type: "address" }], outputs: [] }];
  state.entryPoint = (await api(state.secret, "POST", "/v1/contracts", { name: "EntryPoint", chainId: 31337, address: ENTRY_POINT, abi })).id;
  state.rulesPolicy = (await api(state.secret, "POST", "/v1/policies", { name: "Service rules", chainId: 31337, strategy: { sponsorSchema: "pay_for_user" } })).id;
  await depositRule(state.rulesPolicy);
});

test("registers our own ERC-7677 service on the Paymasters page, checks it, and a policy sponsors through it", async ({ browser }) => {
  const { page } = await openPage(browser);
  await signIn(page, pat, state.base);
  await openSection(page, "Paymasters");
  await expect(page.getByText("No paymasters registered")).toBeVisible();
  const address = (await page.getByTestId("our-paymaster-address").textContent())!.trim();
  const url = (await page.getByTestId("our-paymaster-url").locator("code").textContent())!.trim();
  expect(url).toMatch(/\/v1\/paymaster_service\/pk_test_/);

  // A bad context is refused, naming it; the form keeps what was typed.
  await page.getByLabel("Name").fill("Ours over ERC-7677");
  await page.getByLabel("Address").fill(address);
  await page.getByLabel("Service URL").fill(url);
  await page.getByLabel(/^Context/).fill("{not json");
  await page.getByRole("button", { name: "Register paymaster" }).click();
  await expect(pageAlert(page).first()).toContainText("context");
  await page.getByLabel(/^Context/).fill(JSON.stringify({ policy: state.rulesPolicy }));
  await page.getByRole("button", { name: "Register paymaster" }).click();
  const row = page.getByRole("row", { name: /Ours over ERC-7677/ });
  await expect(row).toBeVisible();
  await row.getByRole("button", { name: "Check" }).click();
  await expect(row.getByRole("status")).toContainText("serves EntryPoint v0.6");
  await screenshot(page, "60-paymasters");
  state.paymaster = (await api(state.secret, "GET", "/v1/paymasters"))[0].id; // a bare array, as the SDK reads it

  // A policy choosing it in the policy form.
  await page.goto(`${baseUrl()}${state.base}/policies/new`);
  await page.getByLabel("Name").fill("Through our ERC-7677 service");
  await page.getByLabel("Paymaster").selectOption({ label: `Ours over ERC-7677 (${state.paymaster})` });
  await page.getByRole("button", { name: "Create policy" }).click();
  await page.waitForURL(/\/policies\/pol_/);
  state.policy = page.url().match(/(pol_[^/?#]+)/)![1]!;
  await expect(page.getByText(state.paymaster).first()).toBeVisible();
  await depositRule(state.policy);

  const intent = await api(state.secret, "POST", "/v1/transaction_intents", {
    chainId: 31337,
    policy: state.policy,
    interactions: [{ contract: state.entryPoint, functionName: "depositTo", functionArgs: [address] }],
  });
  expect(intent.userOperation.paymasterAndData.slice(0, 42).toLowerCase()).toBe(address.toLowerCase());
  await expect.poll(async () => (await api(state.secret, "GET", `/v1/transaction_intents/${intent.id}`)).response?.status, { timeout: 60_000 }).toBe(1);

  // In use by the policy: deleting it is refused, saying which policy.
  await page.goto(`${baseUrl()}${state.base}/paymasters`);
  page.once("dialog", (dialog) => dialog.accept());
  await page.getByRole("row", { name: /Ours over ERC-7677/ }).getByRole("button", { name: "Delete" }).click();
  await expect(pageAlert(page).first()).toContainText(state.policy);
});
