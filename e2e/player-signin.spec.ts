import crypto from "node:crypto";
import type { Browser, Page } from "@playwright/test";
import { createRemoteJWKSet, decodeProtectedHeader, jwtVerify } from "jose";
import { baseUrl, expect, openSection, pageAlert, screenshot, signIn, signUp, test, trackedPages } from "./fixtures";

test.describe.configure({ mode: "serial" });

const stamp = Date.now();
const fay = { name: "Fay Developer", email: `fay-${stamp}@example.com`, password: "player sign-in passphrase", organization: "Fay Games" };
const BOT_TOKEN = `7${stamp % 1_000_000}:AAH-${crypto.randomBytes(12).toString("hex")}`;
const player = { email: `ada-${stamp}@example.com`, password: "correct horse battery staple", name: "Ada Player" };

/** What the serial tests share. */
const state = { base: "", secret: "", publishableKey: "", jwksUrl: "", kid: "", projectId: "", playerId: "", playerToken: "" };
const openPage = trackedPages();

/** A signed-in page on the Player sign-in page of `mode`. */
async function signInPage(browser: Browser, mode: "test" | "live" = "test"): Promise<Page> {
  const { page } = await openPage(browser);
  page.on("dialog", (dialog) => void dialog.accept());
  await signIn(page, fay, state.base);
  await page.goto(`${baseUrl()}${state.base.replace(/\/test$/, `/${mode}`)}/sign-in`);
  await expect(page.getByRole("heading", { level: 1, name: "Player sign-in" })).toBeVisible();
  return page;
}

/** Telegram.WebApp.initData as Telegram signs it for the bot whose token is `botToken`. */
function miniAppInitData(botToken: string, userId: number) {
  const fields = new URLSearchParams({ auth_date: String(Math.floor(Date.now() / 1000)), query_id: "AAH-e2e", user: JSON.stringify({ id: userId, first_name: "Tele", username: "tele_e2e" }) });
  const check = [...fields.entries()].sort(([a], [b]) => (a < b ? -1 : 1)).map(([k, v]) => `${k}=${v}`).join("\n");
  const secret = crypto.createHmac("sha256", "WebAppData").update(botToken).digest();
  fields.set("hash", crypto.createHmac("sha256", secret).update(check).digest("hex"));
  return fields.toString();
}

/** A Telegram Mini App sign-in through the API, as a game backend does it: the status and answer. */
async function telegramSignIn(userId: number) {
  const res = await fetch(`${baseUrl()}/iam/v1/oauth/telegramMiniApp/authorize`, {
    method: "POST",
    headers: { authorization: `Bearer ${state.secret}`, "content-type": "application/json" },
    body: JSON.stringify({ token: miniAppInitData(BOT_TOKEN, userId) }),
  });
  return { status: res.status, body: await res.json() };
}

test("setup: a developer with a secret key; the nav leads to Player sign-in", async ({ browser }) => {
  const { page } = await openPage(browser);
  state.base = await signUp(page, fay);
  state.projectId = state.base.split("/")[2]!;
  await page.goto(`${baseUrl()}${state.base}/keys`);
  await page.getByRole("button", { name: "Create secret key" }).click();
  state.secret = (await page.getByTestId("new-secret-key").textContent())!;
  expect(state.secret).toMatch(/^sk_test_/);
  state.publishableKey = (await page.getByTestId("publishable-key").textContent())!;
  await openSection(page, "Player sign-in");
  await expect(page.getByRole("link", { name: "Player sign-in" })).toHaveAttribute("aria-current", "page");
});

test("the JWKS URL is shown and answers the mode's signing key; issuer, audience and lifetime too", async ({ browser }) => {
  const page = await signInPage(browser);
  state.jwksUrl = (await page.getByTestId("jwks-url").textContent())!;
  expect(state.jwksUrl).toBe(`${baseUrl()}/iam/v1/${state.publishableKey}/jwks.json`);
  state.kid = (await page.getByTestId("current-kid").textContent())!;
  expect(state.kid).toMatch(/^ptk_/);
  const res = await fetch(state.jwksUrl);
  expect(res.status).toBe(200);
  const jwks = (await res.json()) as { keys: { kid: string; alg: string; kty: string }[] };
  expect(jwks.keys.map((k) => k.kid)).toEqual([state.kid]);
  expect(jwks.keys[0]).toMatchObject({ alg: "ES256", kty: "EC" });
  await expect(page.getByText(state.projectId, { exact: true })).toBeVisible();
  await expect(page.getByText("smart-wallet-service", { exact: true })).toBeVisible();
  await expect(page.getByText(/^1 hour/)).toBeVisible();
  await expect(page.getByTestId("state-email")).toHaveText("always on");
  await expect(page.getByTestId("state-telegramMiniApp")).toHaveText("not configured");
  await screenshot(page, "70-player-signin");
});

test("configure telegramMiniApp: the bot token is masked afterwards, and sign-in with it works", async ({ browser }) => {
  const page = await signInPage(browser);
  await page.getByLabel("Provider").selectOption("telegramMiniApp");
  await page.getByLabel("Bot token").fill(BOT_TOKEN);
  await page.getByLabel("Maximum age (seconds)").fill("3600");
  await page.getByRole("button", { name: "Configure Telegram Mini App" }).click();
  await expect(page.getByRole("status").filter({ hasText: "Saved telegramMiniApp: on." })).toBeVisible();
  await expect(page.getByTestId("state-telegramMiniApp")).toHaveText("on");
  const settings = page.getByTestId("settings-telegramMiniApp");
  await expect(settings).toContainText(`…${BOT_TOKEN.slice(-4)}`);
  await expect(settings).toContainText("3600");
  // Never whole: not in the page, not in the form (which starts again from the stored settings).
  await expect(page.getByLabel("Bot token")).toHaveValue("");
  await expect(page.getByLabel("Bot token")).toHaveAttribute("placeholder", new RegExp(`…${BOT_TOKEN.slice(-4)} stored`));
  expect(await page.content()).not.toContain(BOT_TOKEN);
  await page.reload();
  expect(await page.content()).not.toContain(BOT_TOKEN);
  await expect(page.getByTestId("state-telegramMiniApp")).toHaveText("on");

  const signedIn = await telegramSignIn(424242);
  expect(signedIn.status, JSON.stringify(signedIn.body)).toBe(200);
  expect(signedIn.body.playerId).toMatch(/^pla_/);
});

test("turn telegramMiniApp off and on: sign-in is refused while it is off", async ({ browser }) => {
  const page = await signInPage(browser);
  await page.getByTestId("actions-telegramMiniApp").getByRole("button", { name: "Turn off" }).click();
  await expect(page.getByTestId("state-telegramMiniApp")).toHaveText("off");
  const refused = await telegramSignIn(424242);
  expect(refused.status).toBe(400);
  expect(refused.body.error.message).toContain("disabled");
  // The settings survive the switch.
  await expect(page.getByTestId("settings-telegramMiniApp")).toContainText(`…${BOT_TOKEN.slice(-4)}`);

  await page.getByTestId("actions-telegramMiniApp").getByRole("button", { name: "Turn on" }).click();
  await expect(page.getByTestId("state-telegramMiniApp")).toHaveText("on");
  expect((await telegramSignIn(424242)).status).toBe(200);
});

test("a bad field gets the API's 400 next to it: maxAgeSeconds out of range, an http baseUrl in live mode", async ({ browser }) => {
  const page = await signInPage(browser);
  await page.getByLabel("Provider").selectOption("telegramMiniApp");
  await page.getByLabel("Maximum age (seconds)").fill("10");
  await page.getByRole("button", { name: "Update Telegram Mini App" }).click();
  await expect(pageAlert(page)).toContainText("maxAgeSeconds");
  const field = page.locator("div", { has: page.getByLabel("Maximum age (seconds)") }).last();
  await expect(field).toContainText(/60/);
  await expect(field.locator(".text-rose-700")).toBeVisible();
  // Nothing changed.
  await expect(page.getByTestId("settings-telegramMiniApp")).toContainText("3600");
  // Fixed, with the bot token left empty: the stored one stays, and still verifies.
  await page.getByLabel("Maximum age (seconds)").fill("7200");
  await page.getByRole("button", { name: "Update Telegram Mini App" }).click();
  await expect(page.getByTestId("settings-telegramMiniApp")).toContainText("7200");
  await expect(page.getByTestId("settings-telegramMiniApp")).toContainText(`…${BOT_TOKEN.slice(-4)}`);
  expect((await telegramSignIn(424242)).status).toBe(200);

  const live = await signInPage(browser, "live");
  await expect(live.getByTestId("jwks-url")).toContainText("/iam/v1/pk_live_");
  await live.getByLabel("Provider").selectOption("lootlocker");
  await live.getByLabel("Base URL").fill("http://api.lootlocker.example");
  await live.getByRole("button", { name: "Configure LootLocker" }).click();
  const base = live.locator("div", { has: live.getByLabel("Base URL") }).last();
  await expect(base.locator(".text-rose-700")).toHaveText("live mode requires an https URL");
  await expect(live.getByTestId("state-lootlocker")).toHaveText("not configured");
  await screenshot(live, "71-player-signin-error");
});

test("a player signed up through the API is listed with its email identity, and filtered by email", async ({ browser }) => {
  const res = await fetch(`${baseUrl()}/iam/v1/auth/signup`, {
    method: "POST",
    headers: { authorization: `Basic ${Buffer.from(`${state.publishableKey}:`).toString("base64")}`, "content-type": "application/json" },
    body: JSON.stringify(player),
  });
  const body = await res.json();
  expect(res.status, JSON.stringify(body)).toBe(200);
  state.playerId = body.player.id;
  state.playerToken = body.token;

  const page = await signInPage(browser);
  const players = page.locator("section", { has: page.getByRole("heading", { name: "Players who signed in" }) });
  const row = players.getByRole("row").filter({ hasText: state.playerId });
  await expect(row.getByTestId("identity-email")).toContainText(player.email);
  await expect(row.getByTestId("identity-email")).toContainText("unverified");
  // The Telegram player is listed too, with its provider identity.
  await expect(players.getByTestId("identity-telegramMiniApp")).toContainText("424242");

  await players.getByRole("searchbox", { name: "Filter by email" }).fill(player.email.toUpperCase());
  await players.getByRole("button", { name: "Search" }).click();
  await expect(page).toHaveURL(/[?&]email=/);
  await expect(players.getByRole("row")).toHaveCount(2); // the header and Ada
  await expect(players.getByRole("row").nth(1)).toContainText(state.playerId);

  await screenshot(page, "72-player-signin-players");
  await row.getByRole("link", { name: player.name }).click();
  await page.waitForURL(`**${state.base}/players/${state.playerId}`);
});

test("rotate the signing key: a new key id signs, and a token signed before still verifies with the JWKS", async ({ browser }) => {
  const page = await signInPage(browser);
  await expect(page.getByTestId("current-kid")).toHaveText(state.kid);
  await page.getByRole("button", { name: "Rotate signing key" }).click();
  await expect(page.getByRole("status").filter({ hasText: "New signing key" })).toBeVisible();
  const newKid = (await page.getByTestId("current-kid").textContent())!;
  expect(newKid).toMatch(/^ptk_/);
  expect(newKid).not.toBe(state.kid);
  await expect(page.getByTestId("retired-kid")).toHaveText(state.kid);

  const jwks = (await (await fetch(state.jwksUrl)).json()) as { keys: { kid: string }[] };
  expect(jwks.keys.map((k) => k.kid)).toEqual([newKid, state.kid]);
  const verifier = createRemoteJWKSet(new URL(state.jwksUrl));
  const old = await jwtVerify(state.playerToken, verifier, { issuer: "smart-wallet-service", audience: state.projectId });
  expect(old.payload.sub).toBe(state.playerId);
  expect(decodeProtectedHeader(state.playerToken).kid).toBe(state.kid);

  const login = await fetch(`${baseUrl()}/iam/v1/auth/login`, {
    method: "POST",
    headers: { authorization: `Basic ${Buffer.from(`${state.publishableKey}:`).toString("base64")}`, "content-type": "application/json" },
    body: JSON.stringify({ email: player.email, password: player.password }),
  });
  const { token } = await login.json();
  expect(decodeProtectedHeader(token).kid).toBe(newKid);
  expect((await jwtVerify(token, verifier, { issuer: "smart-wallet-service", audience: state.projectId })).payload.sub).toBe(state.playerId);
});

test("remove the telegramMiniApp configuration", async ({ browser }) => {
  const page = await signInPage(browser);
  await page.getByTestId("actions-telegramMiniApp").getByRole("button", { name: "Remove" }).click();
  await expect(page.getByTestId("state-telegramMiniApp")).toHaveText("not configured");
  expect((await telegramSignIn(424242)).status).toBe(400);
});

test("Sign-In with Ethereum: the allowed domains and URIs are set on the page, a bad line is named, and the API sees them", async ({ browser }) => {
  const page = await signInPage(browser);
  // Unconfigured test mode: loopback (and PUBLIC_URL's host) by default.
  await expect(page.getByTestId("siwe-allowed-domains")).toContainText("localhost");
  await page.getByLabel("Allowed domains").fill("game.example\nhttps://bad.example/");
  await page.getByRole("button", { name: "Save Sign-In with Ethereum settings" }).click();
  await expect(pageAlert(page)).toContainText("domains");
  const field = page.locator("div", { has: page.getByLabel("Allowed domains") }).last();
  await expect(field.locator(".text-rose-700")).toContainText("Line 2");
  await page.getByLabel("Allowed domains").fill("game.example\n*.preview.game.example");
  await page.getByLabel("Allowed URIs (optional)").fill("https://game.example/login");
  await page.getByRole("button", { name: "Save Sign-In with Ethereum settings" }).click();
  await expect(page.getByRole("status").filter({ hasText: "Saved." })).toBeVisible();
  await expect(page.getByTestId("siwe-allowed-domains")).toContainText("*.preview.game.example");
  const res = await fetch(`${baseUrl()}/iam/v1/siwe/settings`, { headers: { authorization: `Bearer ${state.secret}` } });
  expect(await res.json()).toMatchObject({ domains: ["game.example", "*.preview.game.example"], uris: ["https://game.example/login"] });
  // Live mode's settings are its own: nothing is allowed until set.
  const live = await signInPage(browser, "live");
  await expect(live.getByTestId("siwe-allowed-domains")).toContainText("No domain is allowed yet");
});
