import http from "node:http";
import type { AddressInfo } from "node:net";
import type { Page } from "@playwright/test";
import { testTokenAbi, testTokenBytecode } from "../contracts/artifacts";
import { api, baseUrl, expect, failOnConsoleErrors, fundedWallet, newPage, openSection as openSectionOf, pageAlert, rpcReceipt, screenshot, signUp, sponsoredMint, test } from "./fixtures";

test.describe.configure({ mode: "serial" });

const stamp = Date.now();
const alice = { name: "Alice Developer", email: `alice-${stamp}@example.com`, password: "correct horse battery staple", organization: "Alice Games" };
const bob = { name: "Bob Developer", email: `bob-${stamp}@example.com`, password: "another long passphrase", organization: "Bob Studio" };

/** Alice's signed-in page, shared by the serial tests, and what they pass on to each other. */
let page: Page;
let consoleErrors: string[];
const state = { base: "", secret: "", contractId: "", token: "" as `0x${string}`, playerId: "", accountAddress: "", policyId: "", intentId: "" };

test.beforeAll(async ({ browser }) => {
  ({ page, errors: consoleErrors } = await newPage(browser));
});

failOnConsoleErrors(() => consoleErrors);

const openSection = (name: string) => openSectionOf(page, name);

test("sign up through the claim link printed at start: the developer owns that project", async () => {
  state.base = await signUp(page, alice, process.env.E2E_CLAIM_URL!);
  await expect(page.getByRole("heading", { name: "Default project" })).toBeVisible();
  await expect(page.getByText("Get started")).toBeVisible();
  await screenshot(page, "01-overview");
  // Chromium asks for /favicon.ico on some navigations whatever the page's icon links say.
  expect((await page.request.get(`${baseUrl()}/favicon.ico`)).status()).toBe(200);
  // The printed key is this project's: what it creates shows up here.
  await api(process.env.E2E_PRINTED_SECRET!, "POST", "/v1/players", { name: "Printed-key player" });
  await openSection("Players");
  await expect(page.getByRole("link", { name: "Printed-key player" })).toBeVisible();
});

test("the claim link works once; the owner invites a developer, who signs up into the organization", async ({ browser }) => {
  const { page: other, errors } = await newPage(browser);
  await other.goto(process.env.E2E_CLAIM_URL!);
  await expect(other.getByRole("heading", { name: "This claim link does not work" })).toBeVisible();
  await openSection("Team");
  const erin = { name: "Erin Developer", email: `erin-${stamp}@example.com`, password: "yet another passphrase" };
  await page.getByLabel("Email to invite").fill(erin.email);
  await page.getByRole("button", { name: "Create invitation" }).click();
  const link = (await page.getByTestId("invite-link").textContent())!;
  expect(link).toMatch(/\/invite\/[\w-]{43}$/);
  await screenshot(page, "14-team");
  // The invited developer signs up with the invited email, into Alice's organization and its project.
  expect(await signUp(other, erin, link)).toBe(state.base);
  await expect(other.getByRole("heading", { name: "Default project" })).toBeVisible();
  expect(errors).toEqual([]);
  await other.context().close();
  await page.reload();
  await expect(page.getByText(erin.email)).toBeVisible();
});

test("sign out, a wrong password, and sign in again", async () => {
  await page.getByRole("button", { name: "Sign out" }).click();
  await page.waitForURL(/\/login$/);
  await page.goto(`${baseUrl()}${state.base}/keys`);
  await expect(page).toHaveURL(/\/login$/);
  await page.getByLabel("Email").fill(alice.email);
  await page.getByLabel("Password").fill("wrong password!");
  await page.getByRole("button", { name: "Sign in" }).click();
  await expect(page.getByText("Wrong email or password.")).toBeVisible();
  await page.getByLabel("Password").fill(alice.password);
  await page.getByRole("button", { name: "Sign in" }).click();
  await page.waitForURL(`**${state.base}`);
});

test("API keys: a new secret key is shown once and works", async () => {
  await openSection("API keys");
  await expect(page.getByTestId("publishable-key")).toContainText("pk_test_");
  await page.getByRole("button", { name: "Create secret key" }).click();
  const shown = page.getByTestId("new-secret-key");
  await expect(shown).toContainText("sk_test_");
  state.secret = (await shown.textContent())!;
  await screenshot(page, "02-keys");
  const players = await api(state.secret, "GET", "/v1/players");
  expect(players.object).toBe("list");
  await page.reload();
  await expect(page.getByTestId("new-secret-key")).toHaveCount(0);
  await expect(page.getByText(state.secret)).toHaveCount(0);
});

test("contracts: register a deployed token with its ABI, read a view function, bad input explained", async () => {
  const deployer = await fundedWallet();
  const hash = await deployer.deployContract({ abi: testTokenAbi, bytecode: testTokenBytecode, args: ["Gold", "GLD"] });
  const receipt = await rpcReceipt(hash);
  state.token = receipt.contractAddress;
  await openSection("Contracts");
  await expect(page.getByText("No contracts yet")).toBeVisible();
  await page.getByRole("link", { name: "Register contract" }).click();
  await page.getByLabel("Name").fill("Game token");
  await page.getByLabel("Address").fill("0x1234");
  await page.getByLabel("ABI").fill("[{not json");
  await page.getByRole("button", { name: "Register contract" }).click();
  await expect(pageAlert(page)).toContainText("Invalid parameter abi: not valid JSON");
  await page.getByLabel("Address").fill(state.token);
  await page.getByLabel("ABI").fill(JSON.stringify(testTokenAbi));
  await page.getByRole("button", { name: "Register contract" }).click();
  await page.waitForURL(/\/contracts\/con_/);
  state.contractId = page.url().split("/").pop()!;
  await expect(page.getByRole("heading", { name: "Game token" })).toBeVisible();
  await page.getByLabel("Function").selectOption({ label: "symbol()" });
  await page.getByRole("button", { name: "Read" }).click();
  await expect(page.getByTestId("read-result")).toContainText('"');
  await page.getByLabel("Function").selectOption({ label: "balanceOf(address account)" });
  await page.getByLabel("account (address)").fill(deployer.account.address);
  await page.getByRole("button", { name: "Read" }).click();
  await expect(page.getByTestId("read-result")).toContainText("BigNumber");
  await screenshot(page, "03-contract");
  await openSection("Contracts");
  await page.getByRole("link", { name: "Show deleted contracts" }).click();
  await page.waitForURL(/\/contracts\?deleted=true$/);
  await expect(page.getByRole("link", { name: "Game token" })).toBeVisible();
  await page.getByRole("link", { name: "Hide deleted contracts" }).click();
  await page.waitForURL(/\/contracts$/);
});

test("players and accounts: create, search, paginate", async () => {
  await openSection("Players");
  await page.getByLabel("Name", { exact: true }).fill("Mallory the Mage");
  await page.getByLabel("Email", { exact: true }).fill("mallory@example.com");
  await page.getByRole("button", { name: "Create player" }).click();
  await page.waitForURL(/\/players\/pla_/);
  state.playerId = page.url().split("/").pop()!;
  await page.getByRole("button", { name: "Create account" }).click();
  await expect(page.getByText("custodial", { exact: true })).toBeVisible();
  await screenshot(page, "04-player");
  // 25 more players through the API: two pages of 20.
  for (let i = 0; i < 25; i++) await api(state.secret, "POST", "/v1/players", { name: `Bulk player ${i}` });
  await openSection("Players");
  await expect(page.getByText(/1–20 of 27/)).toBeVisible();
  await page.getByRole("link", { name: "Next" }).click();
  await expect(page.getByText(/21–27 of 27/)).toBeVisible();
  await page.getByLabel("Search by id, name or email").fill("mallory@");
  await page.getByRole("button", { name: "Search" }).click();
  await expect(page.getByText(/1–1 of 1/)).toBeVisible();
  await expect(page.getByRole("link", { name: "Mallory the Mage" })).toBeVisible();
  await screenshot(page, "05-players");
  const account = (await api(state.secret, "GET", `/v1/accounts?player=${state.playerId}`)).data[0];
  state.accountAddress = account.address;
  await openSection("Accounts");
  await page.getByLabel("Search by address, owner, account or player id").fill(account.address.slice(2, 12).toUpperCase());
  await page.getByRole("button", { name: "Search" }).click();
  await expect(page.getByText(/1–1 of 1/)).toBeVisible();
  await screenshot(page, "06-accounts");
});

test("policies: create one, add rules chosen in words, disable and enable it", async () => {
  page.on("dialog", (dialog) => dialog.accept());
  await openSection("Policies");
  await expect(page.getByText("No policies yet")).toBeVisible();
  await page.getByRole("link", { name: "Create policy" }).click();
  await page.getByLabel("Name").fill("Free mints");
  await page.getByLabel("Who pays the gas").selectOption("fixed_rate");
  await expect(page.getByLabel("Token contract")).toBeVisible();
  await page.getByLabel("Who pays the gas").selectOption("pay_for_user");
  await page.getByRole("button", { name: "Create policy" }).click();
  await page.waitForURL(/\/policies\/pol_/);
  state.policyId = page.url().split("/").pop()!;
  await expect(page.getByText("sponsors nothing yet")).toBeVisible();
  // A contract rule: the token's mint function.
  await page.getByLabel("What should this rule do?").selectOption({ label: "Sponsor calls to a contract" });
  await page.getByLabel("Contract", { exact: true }).selectOption({ label: "Game token" });
  await page.getByLabel("Function", { exact: true }).selectOption("mint");
  await page.getByRole("button", { name: "Add rule" }).click();
  await expect(page.getByText("Sponsors calls to mint() of Game token.")).toBeVisible();
  // A gas limit in ether rather than wei: the API's refusal is shown next to the field.
  await page.getByLabel("What should this rule do?").selectOption("gas_per_transaction");
  await page.getByLabel("Gas limit (wei)").fill("0.01");
  await page.getByRole("button", { name: "Add rule" }).click();
  await expect(page.getByText("Expected a non-negative integer amount in base units (wei), as a decimal string", { exact: true })).toBeVisible();
  // A rate limit.
  await page.getByLabel("What should this rule do?").selectOption("count_per_interval");
  await page.getByLabel("Transactions").fill("5");
  await page.getByLabel("Every").fill("2");
  await page.getByLabel("Period").selectOption("hour");
  await page.getByRole("button", { name: "Add rule" }).click();
  await expect(page.getByText("Each player gets at most 5 sponsored transactions per 2 hours.")).toBeVisible();
  await expect(page.getByText("sponsors nothing yet")).toHaveCount(0);
  // Edit the rate limit in place.
  await page.locator("summary", { hasText: "Edit" }).nth(1).click();
  await page.getByLabel("Transactions").first().fill("50");
  await page.getByRole("button", { name: "Save rule" }).click();
  await expect(page.getByText("Each player gets at most 50 sponsored transactions per 2 hours.")).toBeVisible();
  await page.getByRole("button", { name: "Disable" }).click();
  await expect(page.getByText("disabled", { exact: true })).toBeVisible();
  await screenshot(page, "09-policy");
  await page.getByRole("button", { name: "Enable" }).click();
  await expect(page.getByText("enabled", { exact: true })).toBeVisible();
  const rules = await api(state.secret, "GET", `/v1/policy_rules?policy=${state.policyId}&order=asc`);
  expect(rules.data.map((r: { type: string }) => r.type)).toEqual(["contract_functions", "rate_limit"]);
  await openSection("Policies");
  await expect(page.getByRole("link", { name: "Free mints" })).toBeVisible();
});

test("transaction intents: a sponsored intent sent through the API turns successful on its own", async () => {
  const intent = await sponsoredMint(state.secret, { player: state.playerId, policy: state.policyId, contract: state.contractId, to: state.accountAddress });
  state.intentId = intent.id;
  await openSection("Transaction intents");
  const status = page.getByTestId(`status-${intent.id}`);
  await expect(status).toBeVisible();
  // No reload: the list polls until the intent is confirmed.
  await expect(status).toHaveText("successful", { timeout: 60_000 });
  await screenshot(page, "10-intents");
  await page.getByLabel("Status").selectOption("failed");
  await page.getByRole("button", { name: "Search" }).click();
  await expect(page.getByText("No intent matches these filters")).toBeVisible();
  await page.getByLabel("Status").selectOption("successful");
  await page.getByRole("button", { name: "Search" }).click();
  await page.getByRole("link", { name: intent.id }).click();
  await expect(page.getByTestId("intent-status")).toHaveText("successful");
  await expect(page.getByRole("heading", { name: /^Logs \([1-9]/ })).toBeVisible();
  await expect(page.getByText(/ ETH/).first()).toBeVisible();
  await screenshot(page, "11-intent");
  await expect(page.getByRole("cell", { name: "Transfer", exact: true })).toBeVisible();
  // The policy page lists it among its recent intents.
  await page.getByRole("link", { name: state.policyId }).click();
  await expect(page.getByRole("link", { name: intent.id })).toBeVisible();
  // And its gas counts in the policy's gas report.
  await page.getByRole("link", { name: "Gas report", exact: true }).click();
  await expect(page.getByRole("heading", { level: 1, name: "Gas reports" })).toBeVisible();
  await expect(page.getByTestId("total-intents-31337")).toHaveText("1");
  await expect(page.getByTestId("total-gas-31337")).toHaveText(/^[1-9][\d,]*$/);
  await screenshot(page, "12-gas-report");
});

test("transaction intents: send one from the dashboard and watch its page turn successful", async () => {
  await openSection("Transaction intents");
  // The page also has the swap form (its own player and policy fields).
  const form = page.locator("form", { has: page.getByRole("button", { name: "Send transaction" }) });
  await form.getByLabel("Player").fill(state.playerId);
  await form.getByLabel("Sponsored by").selectOption({ label: "Free mints" });
  await form.getByLabel("Contract", { exact: true }).selectOption({ label: "Game token" });
  await form.getByLabel("Function", { exact: true }).selectOption({ label: "mint(address to, uint256 amount)" });
  await form.getByLabel("to (address)").fill(state.accountAddress);
  await form.getByLabel("amount (uint256)").fill("not a number");
  await form.getByRole("button", { name: "Send transaction" }).click();
  await expect(pageAlert(page)).toContainText("Invalid arguments for mint: amount:");
  await form.getByLabel("amount (uint256)").fill("5");
  await form.getByRole("button", { name: "Send transaction" }).click();
  await page.waitForURL(/\/intents\/tin_/);
  await expect(page.getByTestId("intent-status")).toHaveText(/successful/, { timeout: 60_000 });
  // The page around the status re-rendered when it changed: the transaction and its event.
  await expect(page.getByRole("cell", { name: "Transfer", exact: true })).toBeVisible();
  const intent = await api(state.secret, "GET", `/v1/transaction_intents/${page.url().split("/").pop()}`);
  expect(intent.policy.id).toBe(state.policyId);
  expect(intent.response.status).toBe(1);
  // Once confirmed it can no longer change: the page stops polling (and the next test starts with no request in flight).
  await expect(page.getByTestId("intent-status").getByText("updating live")).toHaveCount(0, { timeout: 60_000 });
});

test("webhooks: set the URL, send a test event, see the signed delivery", async () => {
  const received: { signature: string | undefined; body: string }[] = [];
  const receiver = http.createServer((req, res) => {
    let body = "";
    req.on("data", (c) => (body += c));
    req.on("end", () => {
      received.push({ signature: req.headers["openfort-signature"] as string | undefined, body });
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((r) => receiver.listen(0, "127.0.0.1", r));
  try {
    const url = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hooks`;
    await openSection("Webhooks");
    await expect(page.getByText("No deliveries yet")).toBeVisible();
    await page.getByLabel("URL").fill(url);
    await page.getByRole("button", { name: "Save" }).click();
    await page.getByRole("button", { name: "Send test event" }).click();
    await expect(page.getByRole("status")).toContainText("answered 204");
    await expect(page.getByRole("cell", { name: "test", exact: true })).toBeVisible();
    expect(received).toHaveLength(1);
    expect(received[0]!.signature).toMatch(/^[0-9a-f]{64}$/);
    expect(JSON.parse(received[0]!.body).type).toBe("test");
    await screenshot(page, "07-webhooks");
  } finally {
    receiver.close();
  }
});

test("request log: the API requests made with this project's keys", async () => {
  await openSection("Request log");
  await expect(page.getByRole("cell", { name: "/v1/players" }).first()).toBeVisible();
  await screenshot(page, "08-request-log");
});

test("test/live switch: live mode shows none of the test data, on the same section", async () => {
  await openSection("Transaction intents");
  await page.getByRole("group", { name: "Mode" }).getByRole("link", { name: "Live mode" }).click();
  await page.waitForURL(`**${state.base.replace(/\/test$/, "/live")}/intents`);
  await expect(page.getByText("No transaction intents yet")).toBeVisible();
  await openSection("Players");
  await expect(page.getByText("No players yet")).toBeVisible();
  await openSection("Policies");
  await page.getByRole("link", { name: "Create policy" }).click();
  // No live chain out of the box: the form says what to configure.
  await expect(page.getByRole("note")).toContainText("No live chain is configured");
  await screenshot(page, "13-live-mode");
  await page.getByRole("group", { name: "Mode" }).getByRole("link", { name: "Test mode" }).click();
  await page.waitForURL(`**${state.base}/policies`);
});

test("a second developer cannot open the first one's project, its resources or actions", async ({ browser }) => {
  const { page: other, errors } = await newPage(browser);
  const ownBase = await signUp(other, bob);
  expect(ownBase).not.toBe(state.base);
  await expect(other.getByRole("heading", { name: "My first project" })).toBeVisible();
  // Alice's project, page by page: a plain 404, never her data.
  for (const suffix of ["", "/keys", "/players", `/players/${state.playerId}`, `/contracts/${state.contractId}`, "/policies", `/policies/${state.policyId}`, "/intents", `/intents/${state.intentId}`, "/reports", "/reports/csv", "/webhooks", "/logs"]) {
    const res = await other.goto(`${baseUrl()}${state.base}${suffix}`);
    expect(res?.status(), suffix).toBe(404);
    await expect(other.getByText("Mallory")).toHaveCount(0);
  }
  // Alice's resource ids under Bob's own project: not found there either.
  for (const suffix of [`/players/${state.playerId}`, `/contracts/${state.contractId}`, `/policies/${state.policyId}`, `/intents/${state.intentId}`]) {
    expect((await other.goto(`${baseUrl()}${ownBase}${suffix}`))?.status(), suffix).toBe(404);
  }
  // 404 pages log their failed document request; nothing else may show in the console.
  expect(errors.filter((e) => !e.includes("404"))).toEqual([]);
  await other.context().close();
});

test("phone width: pages fit the screen (tables scroll inside their box)", async () => {
  await page.setViewportSize({ width: 390, height: 844 });
  try {
    for (const [suffix, name] of [["", "overview"], ["/players", "players"], ["/contracts", "contracts"], ["/policies", "policies"], ["/intents", "intents"], ["/reports", "reports"]] as const) {
      await page.goto(`${baseUrl()}${state.base}${suffix}`);
      await expect(page.getByRole("heading", { level: 1 })).toBeVisible();
      const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
      expect(overflow, `${suffix || "/"} is wider than the phone`).toBeLessThanOrEqual(0);
      await screenshot(page, `phone-${name}`);
    }
  } finally {
    await page.setViewportSize({ width: 1280, height: 900 });
  }
});
