import type { Page } from "@playwright/test";
import { parseEther, toHex } from "viem";
import { api, expect, failOnConsoleErrors, newPage, openSection, rpc, screenshot, signUp, test } from "./fixtures";

test.describe.configure({ mode: "serial" });

const stamp = Date.now();
const erin = { name: "Erin Developer", email: `erin-${stamp}@example.com`, password: "swaps from the dashboard" };

let page: Page;
let consoleErrors: string[];

test.beforeAll(async ({ browser }) => {
  ({ page, errors: consoleErrors } = await newPage(browser));
});

failOnConsoleErrors(() => consoleErrors);

test("the intents page quotes a sponsored swap of native for a demo token, shows the quote, then sends it", async () => {
  await signUp(page, erin);
  await openSection(page, "API keys");
  await page.getByRole("button", { name: "Create secret key" }).click();
  const secret = (await page.getByTestId("new-secret-key").textContent())!;
  const policy = await api(secret, "POST", "/v1/policies", { name: "Swaps", chainId: 31337, strategy: { sponsorSchema: "pay_for_user" } });
  await api(secret, "POST", "/v1/policy_rules", { policy: policy.id, type: "contract_functions", wildcard: true, functionName: "All functions" });
  const player = await api(secret, "POST", "/v1/players", { name: "Swapper" });
  const account = await api(secret, "POST", "/v1/accounts", { player: player.id, chainId: 31337 });
  await rpc("anvil_setBalance", [account.address, toHex(parseEther("1"))]);

  await openSection(page, "Transaction intents");
  const form = page.locator("form", { has: page.getByRole("button", { name: "Get quote" }) });
  await form.getByLabel("From (player, account or address)").fill(player.id);
  await expect(form.getByLabel("Sell (token address or native)")).toHaveValue("native");
  await form.getByLabel("Amount (base units)").fill(parseEther("0.01").toString());
  await form.getByLabel("Slippage (%)").fill("1");
  await form.getByLabel("Sponsored by").selectOption({ label: "Swaps" });
  await form.getByRole("button", { name: "Get quote" }).click();
  const quote = page.getByTestId("swap-quote");
  await expect(quote).toContainText("Expected to receive");
  await expect(quote).toContainText(/9\.9\d+ GOLD/);
  await screenshot(page, "exchange-quote");

  await quote.getByRole("button", { name: "Swap" }).click();
  await page.waitForURL(/\/intents\/tin_/);
  await expect(page.getByTestId("intent-status")).toContainText("successful", { timeout: 60_000 });
  await expect(page.getByText("swapExactETHForTokens").first()).toBeVisible();
});
