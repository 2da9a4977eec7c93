import http from "node:http";
import type { AddressInfo } from "node:net";
import type { Page } from "@playwright/test";
import { Webhook } from "standardwebhooks";
import { testTokenAbi, testTokenBytecode } from "../contracts/artifacts";
import { api, baseUrl, CHAIN_ID, expect, failOnConsoleErrors, fundedWallet, newPage, openSection, rpcReceipt, screenshot, signUp, test } from "./fixtures";

test.describe.configure({ mode: "serial" });

const stamp = Date.now();
const erin = { name: "Erin Developer", email: `erin-${stamp}@example.com`, password: "subscriptions passphrase", organization: "Erin Hooks" };

interface Received {
  headers: http.IncomingHttpHeaders;
  body: string;
}

/**
 * The developer's endpoint: records every request and answers `status`; `failNext` makes the
 * next answer a 500 (then it recovers on its own, as a fixed deploy would).
 */
function startReceiver() {
  const received: Received[] = [];
  const control = { failNext: false };
  const server = http.createServer((req, res) => {
    let body = "";
    req.on("data", (c) => (body += c));
    req.on("end", () => {
      received.push({ headers: req.headers, body });
      if (control.failNext) {
        control.failNext = false;
        res.writeHead(500, { "content-type": "text/plain" }).end("receiver broken");
      } else res.writeHead(204).end();
    });
  });
  const listening = new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  return { received, control, server, listening, url: () => `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks` };
}

const receiver = startReceiver();
let page: Page;
let consoleErrors: string[];
const state = { base: "", secret: "", subscriptionId: "", triggerId: "", signingSecret: "", deadTriggerId: "", deadUrl: "", intentId: "", requestId: "", ids: { player: "", policy: "", contract: "", to: "" } };

test.beforeAll(async ({ browser }) => {
  await receiver.listening;
  // A port nothing listens on: every delivery to it fails at once.
  const dead = http.createServer();
  await new Promise<void>((r) => dead.listen(0, "127.0.0.1", r));
  state.deadUrl = `http://127.0.0.1:${(dead.address() as AddressInfo).port}/gone`;
  await new Promise((r) => dead.close(r));
  ({ page, errors: consoleErrors } = await newPage(browser));
  page.on("dialog", (dialog) => void dialog.accept());
});

test.afterAll(() => {
  receiver.server.close();
});

failOnConsoleErrors(() => consoleErrors);

/** A sponsored mint through the API with the request's x-request-id, which the delivery log files the event under. */
async function sponsoredIntent() {
  const res = await fetch(`${baseUrl()}/v1/transaction_intents`, {
    method: "POST",
    headers: { authorization: `Bearer ${state.secret}`, "content-type": "application/json" },
    body: JSON.stringify({ chainId: CHAIN_ID, player: state.ids.player, policy: state.ids.policy, interactions: [{ contract: state.ids.contract, functionName: "mint", functionArgs: [state.ids.to, "1000"] }] }),
  });
  const json = await res.json();
  expect(res.status, JSON.stringify(json)).toBe(200);
  return { id: json.id as string, requestId: res.headers.get("x-request-id")! };
}

const deliveriesOf = (topic: string, objectId?: string) => receiver.received.filter((r) => {
  const body = JSON.parse(r.body);
  return body.type === topic && (!objectId || body.data?.id === objectId);
});

test("setup: a developer with a secret key, a token and a policy sponsoring its mints", async () => {
  state.base = await signUp(page, erin);
  await openSection(page, "API keys");
  await page.getByRole("button", { name: "Create secret key" }).click();
  state.secret = (await page.getByTestId("new-secret-key").textContent())!;
  const deployer = await fundedWallet();
  const token = (await rpcReceipt(await deployer.deployContract({ abi: testTokenAbi, bytecode: testTokenBytecode, args: ["Hooks", "HK"] }))).contractAddress;
  const contract = await api(state.secret, "POST", "/v1/contracts", { name: "Hook token", chainId: CHAIN_ID, address: token, abi: testTokenAbi });
  const player = await api(state.secret, "POST", "/v1/players", { name: "Hook player" });
  const account = await api(state.secret, "POST", "/v1/accounts", { player: player.id, chainId: CHAIN_ID });
  const policy = await api(state.secret, "POST", "/v1/policies", { name: "Hook mints", chainId: CHAIN_ID, strategy: { sponsorSchema: "pay_for_user" } });
  await api(state.secret, "POST", "/v1/policy_rules", { policy: policy.id, type: "contract_functions", contract: contract.id, functionName: "mint" });
  state.ids = { player: player.id, policy: policy.id, contract: contract.id, to: account.address };
});

test("create a subscription with two targets; each signing secret is shown once", async () => {
  await openSection(page, "Subscriptions");
  await expect(page.getByText("No subscriptions yet")).toBeVisible();
  await page.getByLabel("Topic").selectOption("transaction_intent.successful");
  await page.getByLabel("Target URL", { exact: true }).fill(receiver.url());
  await page.getByRole("button", { name: "+ Add another target" }).click();
  await page.getByLabel("Target URL 2").fill(state.deadUrl);
  await page.getByRole("button", { name: "Create subscription" }).click();
  const secrets = page.getByTestId("trigger-secret");
  await expect(secrets).toHaveCount(2);
  state.signingSecret = (await secrets.first().textContent())!;
  expect(state.signingSecret).toMatch(/^whsec_/);
  await screenshot(page, "60-subscription-created");

  const [sub] = (await api(state.secret, "GET", "/v1/subscriptions")).data;
  expect(sub.topic).toBe("transaction_intent.successful");
  state.subscriptionId = sub.id;
  state.triggerId = sub.triggers.find((t: { target: string }) => t.target === receiver.url()).id;
  state.deadTriggerId = sub.triggers.find((t: { target: string }) => t.target === state.deadUrl).id;
  // Never again: the list shows neither secret.
  expect(JSON.stringify(sub)).not.toContain("whsec_");
  await page.reload();
  await expect(page.getByTestId("trigger-secret")).toHaveCount(0);
  const card = page.getByRole("region", { name: `Subscription ${state.subscriptionId}` });
  await expect(card.getByRole("row").filter({ hasText: receiver.url() })).toContainText("enabled");
});

test("send a test event to the subscription: the receiver's answer shows inline, signed both ways", async () => {
  const before = receiver.received.length;
  await page.getByTestId(`subscription-actions-${state.subscriptionId}`).getByRole("button", { name: "Send test event" }).click();
  const outcomes = page.getByTestId(`subscription-actions-${state.subscriptionId}`).getByTestId("attempt-outcome");
  await expect(outcomes).toHaveCount(2);
  await expect(outcomes.filter({ hasText: state.triggerId })).toContainText("success");
  await expect(outcomes.filter({ hasText: state.triggerId })).toContainText("HTTP 204");
  await expect(outcomes.filter({ hasText: state.deadTriggerId })).toContainText("failed");
  await expect(page.getByTestId(`subscription-actions-${state.subscriptionId}`).getByText("Test event delivered")).toBeVisible();
  await screenshot(page, "61-subscription-test");

  const test = receiver.received.slice(before).find((r) => JSON.parse(r.body).type === "test")!;
  expect(test).toBeDefined();
  // The Standard Webhooks signature verifies with the secret the page showed once.
  expect(() => new Webhook(state.signingSecret).verify(test.body, test.headers as Record<string, string>)).not.toThrow();
  expect(test.headers["openfort-signature"]).toMatch(/^[0-9a-f]{64}$/);
});

test("send a test event to a URL typed on the page", async () => {
  const card = page.locator("section", { has: page.getByRole("heading", { name: "Send a test event to a URL" }) });
  await card.getByRole("textbox", { name: "URL", exact: true }).fill(receiver.url());
  await card.getByRole("button", { name: "Send test event" }).click();
  await expect(card.getByTestId("attempt-outcome")).toContainText("HTTP 204");
  await expect(card.getByText("Test event delivered")).toBeVisible();
});

test("a sponsored intent's delivery is in the log, filtered by status and by the intent's id", async () => {
  const intent = await sponsoredIntent();
  state.intentId = intent.id;
  state.requestId = intent.requestId;
  await expect.poll(() => deliveriesOf("transaction_intent.successful", intent.id).length, { timeout: 90_000 }).toBe(1);
  const delivery = deliveriesOf("transaction_intent.successful", intent.id)[0]!;
  expect(() => new Webhook(state.signingSecret).verify(delivery.body, delivery.headers as Record<string, string>)).not.toThrow();

  await page.getByRole("link", { name: "Delivery log →" }).click();
  await expect(page.getByRole("heading", { level: 1, name: "Delivery log" })).toBeVisible();
  await page.getByLabel("Status").selectOption("success");
  await page.getByLabel("Object").fill(intent.id);
  await page.getByRole("button", { name: "Filter" }).click();
  await page.waitForURL(/status=success/);
  expect(new URL(page.url()).searchParams.get("object")).toBe(intent.id);
  const rows = page.getByRole("row").filter({ hasText: intent.id });
  await expect(rows).toHaveCount(1);
  await expect(rows).toContainText("transaction_intent.successful");
  await expect(rows).toContainText("204");
  await expect(rows).toContainText(state.triggerId);
  await expect(rows).toContainText(intent.requestId);
  await screenshot(page, "62-delivery-log-filtered");

  // The dead target's attempts are there too, failed, under the same intent.
  await page.goto(`${baseUrl()}${state.base}/subscriptions/logs?status=failed&object=${intent.id}`);
  await expect(page.getByRole("row").filter({ hasText: state.deadTriggerId }).first()).toContainText("failed");

  // By the request id of the intent's POST; the related object links to the intent's page.
  await page.goto(`${baseUrl()}${state.base}/subscriptions/logs?requestID=${intent.requestId}&status=success`);
  await expect(page.getByRole("row").filter({ hasText: intent.id })).toHaveCount(1);
  await page.getByRole("link", { name: intent.id }).click();
  await page.waitForURL(`**/intents/${intent.id}`);
});

test("a failed delivery, then the receiver fixed: Redeliver sends the same event and succeeds", async () => {
  receiver.control.failNext = true;
  const intent = await sponsoredIntent();
  await expect.poll(() => deliveriesOf("transaction_intent.successful", intent.id).length, { timeout: 90_000 }).toBeGreaterThanOrEqual(1);
  const failedId = deliveriesOf("transaction_intent.successful", intent.id)[0]!.headers["webhook-id"];

  await page.goto(`${baseUrl()}${state.base}/subscriptions/logs?status=failed&trigger=${state.triggerId}&object=${intent.id}`);
  const failed = page.getByRole("row").filter({ hasText: intent.id });
  await expect(failed).toHaveCount(1);
  await expect(failed).toContainText("500");
  await screenshot(page, "63-delivery-failed");

  // The attempt's page: what the receiver answered.
  await failed.getByRole("link").first().click();
  await expect(page.getByRole("heading", { level: 1, name: "Delivery" })).toBeVisible();
  await expect(page.getByText("receiver broken")).toBeVisible();
  await expect(page.getByText(failedId as string).first()).toBeVisible();
  const before = deliveriesOf("transaction_intent.successful", intent.id).length;
  await page.getByRole("button", { name: "Redeliver" }).click();
  await expect(page.getByTestId("attempt-outcome")).toContainText("success");
  await expect(page.getByTestId("attempt-outcome")).toContainText("HTTP 204");
  await screenshot(page, "64-redelivered");
  const after = deliveriesOf("transaction_intent.successful", intent.id);
  expect(after.length).toBeGreaterThan(before);
  // Same event, same webhook-id: the receiver can tell it already has it.
  expect(after.at(-1)!.headers["webhook-id"]).toBe(failedId);

  await page.goto(`${baseUrl()}${state.base}/subscriptions/logs?trigger=${state.triggerId}&object=${intent.id}`);
  await expect(page.getByRole("row").filter({ hasText: "redelivery" }).first()).toContainText("success");
});

test("a trigger failing for the disable period is shown disabled, and re-enabled from the page", async () => {
  // TRIGGER_DISABLE_AFTER is 4s in the e2e server: the dead target's second scheduled failure disabled it.
  await expect
    .poll(async () => (await api(state.secret, "GET", `/v1/subscriptions/${state.subscriptionId}/triggers/${state.deadTriggerId}`)).status, { timeout: 60_000 })
    .toBe("disabled");
  await openSection(page, "Subscriptions");
  const row = page.getByRole("region", { name: `Subscription ${state.subscriptionId}` }).getByRole("row").filter({ hasText: state.deadUrl });
  await expect(row.getByTestId("trigger-disabled")).toContainText("disabled");
  await screenshot(page, "65-trigger-disabled");
  await row.getByRole("button", { name: "Re-enable" }).click();
  await expect(row).toContainText("enabled");
  expect((await api(state.secret, "GET", `/v1/subscriptions/${state.subscriptionId}/triggers/${state.deadTriggerId}`)).status).toBe("enabled");
});

test("remove a target, add one (its secret shown once), delete the subscription", async () => {
  const card = page.getByRole("region", { name: `Subscription ${state.subscriptionId}` });
  await card.getByRole("row").filter({ hasText: state.deadUrl }).getByRole("button", { name: "Remove" }).click();
  await expect(card.getByRole("row").filter({ hasText: state.deadUrl })).toHaveCount(0);
  await card.getByLabel("New target URL").fill(`${receiver.url()}/second`);
  await card.getByRole("button", { name: "Add target" }).click();
  await expect(card.getByTestId("trigger-secret")).toHaveText(/^whsec_/);
  await expect(card.getByRole("row").filter({ hasText: "/hooks/second" })).toContainText("enabled");
  await page.getByTestId(`subscription-actions-${state.subscriptionId}`).getByRole("button", { name: "Delete" }).click();
  await expect(page.getByText("No subscriptions yet")).toBeVisible();
});

test("webhooks page: the first URL set shows its signing secret once; rolling shows a new one", async () => {
  await openSection(page, "Webhooks");
  await page.getByLabel("URL").fill(receiver.url());
  await page.getByRole("button", { name: "Save" }).click();
  const first = (await page.getByTestId("webhook-secret").textContent())!;
  expect(first).toMatch(/^whsec_/);
  await page.getByRole("button", { name: "Roll signing secret" }).click();
  // Only the latest secret is shown: the rolled one replaced the first at once.
  await expect(page.getByTestId("webhook-secret")).not.toHaveText(first);
  await expect(page.getByTestId("webhook-secret")).toHaveCount(1);
  const rolled = (await page.getByTestId("webhook-secret").textContent())!;
  expect(rolled).toMatch(/^whsec_/);
  await page.getByRole("button", { name: "Send test event" }).click();
  await expect(page.getByRole("status")).toContainText("answered 204");
  const test = receiver.received.at(-1)!;
  expect(() => new Webhook(rolled).verify(test.body, test.headers as Record<string, string>)).not.toThrow();
  await screenshot(page, "66-webhook-secret");
  await page.getByRole("link", { name: "delivery log" }).click();
  await expect(page.getByRole("row").filter({ hasText: `${receiver.url()} (no trigger` }).first()).toContainText("204");
});
