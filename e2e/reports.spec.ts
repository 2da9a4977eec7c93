import fs from "node:fs";
import type { Page } from "@playwright/test";
import { testTokenAbi, testTokenBytecode } from "../contracts/artifacts";
import { api, baseUrl, expect, failOnConsoleErrors, fundedWallet, newPage, openSection, pageAlert, rpcReceipt, screenshot, signUp, sponsoredMint, test } from "./fixtures";

test.describe.configure({ mode: "serial" });

const stamp = Date.now();
const dave = { name: "Dave Developer", email: `dave-${stamp}@example.com`, password: "someone else entirely" };
const carol = { name: "Carol Developer", email: `carol-${stamp}@example.com`, password: "gas reports passphrase", organization: "Carol Labs" };

let page: Page;
let consoleErrors: string[];
const state = { base: "", secret: "", policyId: "", intentId: "", gasUsed: 0n, day: "" };

test.beforeAll(async ({ browser }) => {
  ({ page, errors: consoleErrors } = await newPage(browser));
});

failOnConsoleErrors(() => consoleErrors);

test("sign up, take a secret key, and see an empty report that says what to do", async () => {
  state.base = await signUp(page, carol);
  await openSection(page, "API keys");
  await page.getByRole("button", { name: "Create secret key" }).click();
  state.secret = (await page.getByTestId("new-secret-key").textContent())!;
  expect(state.secret).toMatch(/^sk_test_/);
  await openSection(page, "Gas reports");
  await expect(page.getByText(/No sponsored gas from \d{4}-\d{2}-\d{2} to \d{4}-\d{2}-\d{2}/)).toBeVisible();
  await expect(page.getByRole("link", { name: "Download CSV" })).toBeVisible();
});

test("a policy with a rule sponsors an intent sent through the API, which turns successful", async () => {
  const deployer = await fundedWallet();
  const token = (await rpcReceipt(await deployer.deployContract({ abi: testTokenAbi, bytecode: testTokenBytecode, args: ["Gems", "GEM"] }))).contractAddress;
  const contract = await api(state.secret, "POST", "/v1/contracts", { name: "Gem token", chainId: 31337, address: token, abi: testTokenAbi });
  const player = await api(state.secret, "POST", "/v1/players", { name: "Report player" });
  const account = await api(state.secret, "POST", "/v1/accounts", { player: player.id, chainId: 31337 });
  const policy = await api(state.secret, "POST", "/v1/policies", { name: "Gem mints", chainId: 31337, strategy: { sponsorSchema: "pay_for_user" } });
  await api(state.secret, "POST", "/v1/policy_rules", { policy: policy.id, type: "contract_functions", contract: contract.id, functionName: "mint" });
  state.policyId = policy.id;
  const intent = await sponsoredMint(state.secret, { player: player.id, policy: policy.id, contract: contract.id, to: account.address });
  state.intentId = intent.id;
  // The intents list polls until the intent has its confirmations.
  await openSection(page, "Transaction intents");
  await expect(page.getByTestId(`status-${intent.id}`)).toHaveText("successful", { timeout: 60_000 });
  const landed = await api(state.secret, "GET", `/v1/transaction_intents/${intent.id}`);
  state.gasUsed = BigInt(landed.response.gasUsed);
  state.day = new Date(landed.createdAt * 1000).toISOString().slice(0, 10);
  expect(state.gasUsed).toBeGreaterThan(0n);
});

test("gas reports: pick the policy, see the chart, the totals and the day's row", async () => {
  await openSection(page, "Gas reports");
  await page.getByLabel("Policy").selectOption({ label: "Gem mints · Local anvil (31337)" });
  await page.getByRole("button", { name: "Show report" }).click();
  await page.waitForURL(new RegExp(`/reports\\?policy=${state.policyId}&`));
  await expect(page.getByTestId("gas-chart").locator("svg.recharts-surface").first()).toBeVisible();
  await expect(page.getByTestId("gas-chart").locator(".recharts-bar-rectangle").first()).toBeAttached();
  await expect(page.getByTestId("total-intents-31337")).toHaveText("1");
  await expect(page.getByTestId("total-gas-31337")).toHaveText(state.gasUsed.toLocaleString("en-US"));
  await expect(page.getByTestId("total-fee-native-31337")).toHaveText(/^0\.\d*[1-9]\d* ETH$/);
  // No CHAIN_31337_USD_PRICE in the e2e server: no USD amount, and what to set for one.
  await expect(page.getByTestId("total-fee-usd-31337")).toHaveText("—");
  await expect(page.getByText("CHAIN_31337_USD_PRICE")).toBeVisible();
  const row = page.getByRole("row").filter({ has: page.getByRole("cell", { name: state.day, exact: true }) });
  await expect(row).toHaveCount(1);
  await expect(row.getByRole("cell", { name: state.gasUsed.toLocaleString("en-US"), exact: true })).toBeVisible();
  await screenshot(page, "30-gas-report");
});

test("gas reports: the CSV download has the header and the day's line", async () => {
  const [download] = await Promise.all([page.waitForEvent("download"), page.getByRole("link", { name: "Download CSV" }).click()]);
  expect(download.suggestedFilename()).toMatch(new RegExp(`^gas-report-${state.policyId}-\\d{4}-\\d{2}-\\d{2}-to-\\d{4}-\\d{2}-\\d{2}\\.csv$`));
  const lines = fs.readFileSync((await download.path())!, "utf8").trim().split("\r\n");
  expect(lines[0]).toBe("date,chain_id,symbol,intents,gas_used,fee_wei,fee_native,fee_usd");
  expect(lines.slice(1)).toHaveLength(1);
  expect(lines[1]).toMatch(new RegExp(`^${state.day},31337,ETH,1,${state.gasUsed},[1-9]\\d*,0\\.\\d+,$`));
});

test("gas reports: a start after the end, or a date that is none, is explained on the page", async () => {
  const alert = pageAlert(page);
  await page.getByLabel("From").fill("2026-05-02");
  await page.getByLabel("To").fill("2026-05-01");
  await page.getByRole("button", { name: "Show report" }).click();
  await expect(alert).toHaveText("The date range starts (2026-05-02) after it ends (2026-05-01): pick a start on or before the end.");
  await expect(page.getByTestId("gas-chart")).toHaveCount(0);
  // The filters stay as typed, to be fixed.
  await expect(page.getByLabel("From")).toHaveValue("2026-05-02");
  await page.goto(`${baseUrl()}${state.base}/reports?from=2026-02-30`);
  await expect(alert).toHaveText("The from date '2026-02-30' is not a date written as YYYY-MM-DD.");
  // The CSV link answers the same refusal as JSON, not a 500.
  const res = await page.request.get(`${baseUrl()}${state.base}/reports/csv?from=2026-05-02&to=2026-05-01`);
  expect(res.status()).toBe(400);
  expect((await res.json()).error.type).toBe("invalid_request_error");
});

test("the policy's page links to its gas report, preselected", async () => {
  await page.goto(`${baseUrl()}${state.base}/policies/${state.policyId}`);
  await page.getByRole("link", { name: "Gas report", exact: true }).click();
  await expect(page.getByRole("heading", { level: 1, name: "Gas reports" })).toBeVisible();
  await expect(page.getByLabel("Policy")).toHaveValue(state.policyId);
  await expect(page.getByTestId("total-intents-31337")).toHaveText("1");
});

test("live mode's gas report has none of the test gas", async () => {
  await openSection(page, "Gas reports");
  await page.getByRole("group", { name: "Mode" }).getByRole("link", { name: "Live mode" }).click();
  await page.waitForURL(`**${state.base.replace(/\/test$/, "/live")}/reports`);
  await expect(page.getByText(/No sponsored gas from/)).toBeVisible();
  await expect(page.getByRole("option", { name: /Gem mints/ })).toHaveCount(0);
  await page.getByRole("group", { name: "Mode" }).getByRole("link", { name: "Test mode" }).click();
  await page.waitForURL(`**${state.base}/reports`);
});

test("gas reports at phone width: the page fits, the table scrolls inside its box", async () => {
  await page.setViewportSize({ width: 390, height: 844 });
  try {
    await page.goto(`${baseUrl()}${state.base}/reports?policy=${state.policyId}`);
    await expect(page.getByRole("heading", { level: 1, name: "Gas reports" })).toBeVisible();
    await expect(page.getByTestId("gas-chart").locator("svg.recharts-surface").first()).toBeVisible();
    await expect(page.getByRole("cell", { name: state.day, exact: true })).toBeVisible();
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
    expect(overflow, "the report is wider than the phone").toBeLessThanOrEqual(0);
    await screenshot(page, "31-gas-report-phone");
  } finally {
    await page.setViewportSize({ width: 1280, height: 900 });
  }
});

test("another developer gets a 404 for the report and its CSV; signed out, the CSV is a 401", async ({ browser, playwright }) => {
  const { page: other, errors } = await newPage(browser);
  await signUp(other, dave);
  expect((await other.goto(`${baseUrl()}${state.base}/reports?policy=${state.policyId}`))?.status()).toBe(404);
  await expect(other.getByText("Gem mints")).toHaveCount(0);
  const csv = await other.request.get(`${baseUrl()}${state.base}/reports/csv?policy=${state.policyId}`);
  expect(csv.status()).toBe(404);
  expect((await csv.json()).error.type).toBe("invalid_request_error");
  // 404 pages log their failed document request; nothing else may show in the console.
  expect(errors.filter((e) => !e.includes("404"))).toEqual([]);
  await other.context().close();
  const signedOut = await playwright.request.newContext();
  const res = await signedOut.get(`${baseUrl()}${state.base}/reports/csv`);
  expect(res.status()).toBe(401);
  expect((await res.json()).error.type).toBe("authentication_error");
  await signedOut.dispose();
});
