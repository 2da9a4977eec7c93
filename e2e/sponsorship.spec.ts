import type { Page } from "@playwright/test";
import { formatEther } from "viem";
import { testTokenAbi, testTokenBytecode } from "../contracts/artifacts";
import { api, baseUrl, CHAIN_ID, expect, failOnConsoleErrors, fundedWallet, newPage, openSection, pageAlert, rpcReceipt, screenshot, signUp, sponsoredMint, test } from "./fixtures";

// The Sponsorship page (balances and funding, budgets, spend per day, top players, declines, the ledger) and the
// policy page's budgets and dry run, against a real server: a sponsored intent held and settled, a declined one.

test.describe.configure({ mode: "serial" });

const stamp = Date.now();
const frank = { name: "Frank Developer", email: `frank-${stamp}@example.com`, password: "sponsorship ledger passphrase", organization: "Frank Games" };
const gina = { name: "Gina Developer", email: `gina-${stamp}@example.com`, password: "not frank's passphrase" };

let page: Page;
let consoleErrors: string[];
const state = { base: "", projectId: "", secret: "", contractId: "", playerId: "", accountAddress: "", policyId: "", dailyBudget: "", playerBudget: "", tightPolicyId: "", intentId: "" };

test.beforeAll(async ({ browser }) => {
  ({ page, errors: consoleErrors } = await newPage(browser));
});

failOnConsoleErrors(() => consoleErrors);

const TENTH = 10n ** 17n;
/** A number of coins as the page writes it ("0.0999 ETH"), read back. */
const coinsOn = (text: string | null) => Number(text!.replace(/ ETH$/, "").replace(/,/g, ""));

test("sign up: the Sponsorship page shows the local chain's test credit and how to fund it", async () => {
  state.base = await signUp(page, frank);
  state.projectId = state.base.split("/")[2]!;
  await openSection(page, "API keys");
  await page.getByRole("button", { name: "Create secret key" }).click();
  state.secret = (await page.getByTestId("new-secret-key").textContent())!;
  await openSection(page, "Sponsorship");
  const { data } = await api(state.secret, "GET", "/v1/sponsorship/balances");
  const local = data.find((b: { chainId: number }) => b.chainId === CHAIN_ID);
  // A new project gets its test-mode credit on a local chain.
  expect(BigInt(local.available)).toBeGreaterThan(0n);
  await expect(page.getByTestId(`available-${CHAIN_ID}`)).toHaveAttribute("title", `${local.available} wei`);
  await expect(page.getByTestId(`credited-${CHAIN_ID}`)).toHaveText(`${formatEther(BigInt(local.credited))} ETH`);
  await expect(page.getByTestId(`held-${CHAIN_ID}`)).toHaveText("0 ETH");
  await page.getByText("Fund this balance").first().click();
  await expect(page.getByTestId(`fund-cli-${CHAIN_ID}`)).toContainText(`npm run cli -- sponsorship credit --project ${state.projectId} --mode test --chain ${CHAIN_ID} --amount 0.5`);
  await expect(page.getByTestId(`entrypoint-${CHAIN_ID}`)).toHaveText(local.entryPoint);
  await expect(page.getByTestId(`paymaster-${CHAIN_ID}`)).toHaveText(local.paymaster);
  await expect(page.getByText("No policy has a budget rule.")).toBeVisible();
  await expect(page.getByText(/^Nothing settled from \d{4}-\d{2}-\d{2} to \d{4}-\d{2}-\d{2}/)).toBeVisible();
  // The ledger has the local credit: one per local chain of the mode.
  const granted = data.filter((b: { credited: string }) => BigInt(b.credited) > 0n).length;
  expect(granted).toBeGreaterThanOrEqual(1);
  const credit = page.getByRole("row").filter({ hasText: "local grant" });
  await expect(credit).toHaveCount(granted);
  await expect(credit.getByText("credit", { exact: true })).toHaveCount(granted);
});

test("a sponsored intent under budgets is held and settled: the chart, the top players, the budgets' use", async () => {
  const deployer = await fundedWallet();
  const token = (await rpcReceipt(await deployer.deployContract({ abi: testTokenAbi, bytecode: testTokenBytecode, args: ["Gems", "GEM"] }))).contractAddress;
  state.contractId = (await api(state.secret, "POST", "/v1/contracts", { name: "Gem token", chainId: CHAIN_ID, address: token, abi: testTokenAbi })).id;
  state.playerId = (await api(state.secret, "POST", "/v1/players", { name: "Sponsored player" })).id;
  state.accountAddress = (await api(state.secret, "POST", "/v1/accounts", { player: state.playerId, chainId: CHAIN_ID })).address;
  state.policyId = (await api(state.secret, "POST", "/v1/policies", { name: "Gem drops", chainId: CHAIN_ID, strategy: { sponsorSchema: "pay_for_user" } })).id;
  await api(state.secret, "POST", "/v1/policy_rules", { policy: state.policyId, type: "contract_functions", contract: state.contractId, functionName: "mint" });
  state.dailyBudget = (await api(state.secret, "POST", "/v1/policy_rules", { policy: state.policyId, type: "budget", amount: TENTH.toString(), currency: "native", scope: "policy", period: "day" })).id;
  state.playerBudget = (await api(state.secret, "POST", "/v1/policy_rules", { policy: state.policyId, type: "budget", amount: "50", currency: "usd", scope: "player", period: "month" })).id;
  state.intentId = (await sponsoredMint(state.secret, { player: state.playerId, policy: state.policyId, contract: state.contractId, to: state.accountAddress })).id;
  // Settled once it lands: the ledger has its settle entry.
  let settled = 0n;
  for (const deadline = Date.now() + 60_000; settled === 0n; ) {
    const { data } = await api(state.secret, "GET", `/v1/sponsorship/ledger?intent=${state.intentId}&kind=settle`);
    if (data.length) settled = BigInt(data[0].amount);
    else if (Date.now() > deadline) throw new Error("the intent's hold was not settled");
    else await new Promise((r) => setTimeout(r, 500));
  }

  await page.goto(`${baseUrl()}${state.base}/sponsorship`);
  const { data } = await api(state.secret, "GET", "/v1/sponsorship/balances");
  const local = data.find((b: { chainId: number }) => b.chainId === CHAIN_ID);
  expect(BigInt(local.settled)).toBe(settled);
  await expect(page.getByTestId(`settled-${CHAIN_ID}`)).toHaveAttribute("title", `${settled} wei`);
  await expect(page.getByTestId(`available-${CHAIN_ID}`)).toHaveAttribute("title", `${local.available} wei`);
  // Spend per day: one operation, a bar today.
  await expect(page.getByTestId(`spend-total-${CHAIN_ID}`)).toHaveText("1");
  await expect(page.getByTestId("sponsorship-chart").locator("svg.recharts-surface").first()).toBeVisible();
  await expect(page.getByTestId("sponsorship-chart").locator(".recharts-bar-rectangle").first()).toBeAttached();
  // Top spending players: the player, linked to its page.
  await expect(page.getByRole("link", { name: "Sponsored player" })).toHaveAttribute("href", `${state.base}/players/${state.playerId}`);
  // The daily budget: what it cost used, the rest remaining, resetting at the next UTC midnight.
  const daily = page.getByRole("row").filter({ hasText: "This policy spends at most 0.1 ETH on sponsorship per day (UTC)." });
  await expect(daily).toHaveCount(1);
  expect(coinsOn(await page.getByTestId(`budget-remaining-${state.dailyBudget}`).textContent())).toBeCloseTo(Number(formatEther(TENTH - settled)), 5);
  await expect(daily.getByText(/\d{4}-\d{2}-\d{2} 00:00:00 UTC/)).toBeVisible();
  // The per-player budget shows a player's use once one is named.
  const perPlayer = page.getByRole("row").filter({ hasText: "Each player gets at most $50 of sponsorship per calendar month (UTC)" });
  await expect(perPlayer.getByText("name a player to see theirs")).toBeVisible();
  const whose = page.getByRole("form", { name: "Whose budget use" });
  await whose.getByLabel("Player").fill(state.playerId);
  await whose.getByRole("button", { name: "Show their use" }).click();
  await page.waitForURL(new RegExp(`player=${state.playerId}`));
  await expect(perPlayer.getByText(state.playerId)).toBeVisible();
  await expect(page.getByTestId(`budget-remaining-${state.playerBudget}`)).toHaveText(/^\$4\d\.\d+$/);
  await screenshot(page, "40-sponsorship");
});

test("the ledger: filters by kind and intent, pages, and a bad filter explained", async () => {
  await page.goto(`${baseUrl()}${state.base}/sponsorship`);
  const filters = page.getByRole("search", { name: "Ledger filters" });
  await filters.getByLabel("Kind").selectOption("settle");
  await filters.getByRole("button", { name: "Filter" }).click();
  await page.waitForURL(/kind=settle/);
  const ledgerRows = page.getByRole("row").filter({ has: page.getByRole("link", { name: state.intentId }) });
  await expect(ledgerRows).toHaveCount(1);
  await page.goto(`${baseUrl()}${state.base}/sponsorship?intent=${state.intentId}`);
  // Held at its most, settled at its cost, the rest released.
  await expect(ledgerRows).toHaveCount(3);
  for (const kind of ["hold", "settle", "release"]) await expect(ledgerRows.getByText(kind, { exact: true })).toHaveCount(1);
  await expect(page.getByRole("navigation", { name: "Pagination" })).toContainText("1–3 of 3");
  await page.goto(`${baseUrl()}${state.base}/sponsorship?player=nobody`);
  await expect(pageAlert(page)).toContainText("pla_");
  await expect(page.getByRole("search", { name: "Ledger filters" }).getByLabel("Player")).toHaveValue("nobody");
});

test("a declined intent counts in declines by reason", async () => {
  state.tightPolicyId = (await api(state.secret, "POST", "/v1/policies", { name: "Tight", chainId: CHAIN_ID, strategy: { sponsorSchema: "pay_for_user" } })).id;
  await api(state.secret, "POST", "/v1/policy_rules", { policy: state.tightPolicyId, type: "contract_functions", contract: state.contractId, functionName: "mint" });
  await api(state.secret, "POST", "/v1/policy_rules", { policy: state.tightPolicyId, type: "budget", amount: "1", currency: "native", scope: "operation" });
  const res = await fetch(`${baseUrl()}/v1/transaction_intents`, {
    method: "POST",
    headers: { authorization: `Bearer ${state.secret}`, "content-type": "application/json" },
    body: JSON.stringify({ chainId: CHAIN_ID, player: state.playerId, policy: state.tightPolicyId, interactions: [{ contract: state.contractId, functionName: "mint", functionArgs: [state.accountAddress, "1"] }] }),
  });
  expect(res.status).toBe(402);
  expect((await res.json()).error.code).toBe("budget_exhausted");
  await page.goto(`${baseUrl()}${state.base}/sponsorship`);
  await expect(page.getByTestId("declines-budget_exhausted")).toHaveText("1");
  await expect(page.getByText("A budget rule had too little left.")).toBeVisible();
});

test("the policy page: its budgets, and a dry run showing each check and the decision", async () => {
  await page.goto(`${baseUrl()}${state.base}/policies/${state.policyId}`);
  await expect(page.getByRole("heading", { level: 1, name: "Gem drops" })).toBeVisible();
  await expect(page.getByTestId(`budget-remaining-${state.dailyBudget}`)).toHaveText(/ ETH$/);
  const form = page.getByRole("form", { name: "Dry run" });
  // Neither player nor account: the API's refusal, on the form.
  await form.getByLabel("Function to call").selectOption({ label: "mint(address to, uint256 amount)" });
  await form.getByLabel("to (address)").fill(state.accountAddress);
  await form.getByLabel("amount (uint256)").fill("1000");
  await form.getByRole("button", { name: "Run dry run" }).click();
  await expect(form.getByRole("alert")).toContainText("Name the player");
  await form.getByLabel("Player").fill(state.playerId);
  await form.getByRole("button", { name: "Run dry run" }).click();
  const result = page.getByTestId("dry-run-result");
  await expect(result.getByTestId("dry-run-decision")).toHaveText("sponsor");
  for (const check of ["The policy is enabled", "Every call is allowed by a rule", "The project's sponsorship balance covers it", "This policy spends at most 0.1 ETH on sponsorship per day (UTC)."]) {
    const row = result.getByRole("row").filter({ hasText: check });
    await expect(row).toHaveCount(1);
    await expect(row.getByText("passed", { exact: true })).toBeVisible();
  }
  await screenshot(page, "41-policy-dry-run");

  // The tight policy's per-operation budget of 1 wei declines, and says which check failed.
  await page.goto(`${baseUrl()}${state.base}/policies/${state.tightPolicyId}`);
  const tight = page.getByRole("form", { name: "Dry run" });
  await tight.getByLabel("Player").fill(state.playerId);
  await tight.getByLabel("Function to call").selectOption({ label: "mint(address to, uint256 amount)" });
  await tight.getByLabel("to (address)").fill(state.accountAddress);
  await tight.getByLabel("amount (uint256)").fill("1");
  await tight.getByRole("button", { name: "Run dry run" }).click();
  await expect(page.getByTestId("dry-run-decision")).toHaveText("decline");
  await expect(page.getByTestId("dry-run-result").getByText("budget_exhausted").first()).toBeVisible();
  const failed = page.getByTestId("dry-run-result").getByRole("row").filter({ hasText: "Each operation may cost at most" });
  await expect(failed.getByText("failed", { exact: true })).toBeVisible();
});

test("live mode's Sponsorship page has none of the test ledger", async () => {
  await openSection(page, "Sponsorship");
  await page.getByRole("group", { name: "Mode" }).getByRole("link", { name: "Live mode" }).click();
  await page.waitForURL(`**${state.base.replace(/\/test$/, "/live")}/sponsorship`);
  await expect(page.getByText("The ledger is empty")).toBeVisible();
  await expect(page.getByRole("link", { name: "Sponsored player" })).toHaveCount(0);
  await page.getByRole("group", { name: "Mode" }).getByRole("link", { name: "Test mode" }).click();
  await page.waitForURL(`**${state.base}/sponsorship`);
});

test("another developer gets a 404 for the Sponsorship page", async ({ browser }) => {
  const { page: other, errors } = await newPage(browser);
  await signUp(other, gina);
  expect((await other.goto(`${baseUrl()}${state.base}/sponsorship`))?.status()).toBe(404);
  await expect(other.getByText("Sponsored player")).toHaveCount(0);
  expect(errors.filter((e) => !e.includes("404"))).toEqual([]);
  await other.context().close();
});
