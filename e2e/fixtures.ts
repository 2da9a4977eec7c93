import fs from "node:fs";
import path from "node:path";
import { expect, test, type Browser, type Page } from "@playwright/test";
import { createWalletClient, http, parseEther, toHex, type Hex } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";

export const baseUrl = () => process.env.E2E_BASE_URL!;
export const rpcUrl = () => process.env.E2E_RPC_URL!;
export const CHAIN_ID = 31337;

/** Collects the page's console errors and uncaught exceptions: every page must render without any. */
export function watchConsole(page: Page): string[] {
  const errors: string[] = [];
  // A failed load's console message names neither the request nor its purpose: keep them to say which.
  const failed = new Map<string, string>();
  page.on("response", (res) => {
    if (res.status() < 400) return;
    const headers = res.request().headers();
    const kind = headers["next-action"] ? `server action ${headers["next-action"]}` : headers["rsc"] ? `RSC${headers["next-router-prefetch"] ? " prefetch" : ""}` : "document";
    failed.set(res.url(), `${res.request().method()} ${res.url()} (${kind})`);
  });
  page.on("console", (msg) => {
    if (msg.type() !== "error") return;
    const resource = msg.location().url;
    const request = resource ? (failed.get(resource) ?? resource) : undefined;
    errors.push(`${page.url()}: ${msg.text()}${request ? ` [${request}]` : ""}`);
  });
  page.on("pageerror", (err) => errors.push(`${page.url()}: ${err.message}`));
  return errors;
}
export { expect, test };

/** A fresh browser context's page at desktop size, with its console errors collected. */
export async function newPage(browser: Browser) {
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  const page = await context.newPage();
  return { page, errors: watchConsole(page) };
}

/**
 * Fails each test of the file that leaves errors in the console of the page `errors()` watches
 * (a getter: the page is usually opened in beforeAll). A link to a missing page counts, as its
 * prefetch 404s.
 */
export function failOnConsoleErrors(errors: () => string[]) {
  test.afterEach(() => {
    expect(errors(), "browser console errors").toEqual([]);
  });
}

/** Opens a section from the project's navigation and waits for its heading. */
export async function openSection(page: Page, name: string) {
  await page.getByRole("navigation", { name: "Sections" }).getByRole("link", { name, exact: true }).click();
  await expect(page.getByRole("heading", { level: 1, name })).toBeVisible();
}

const SHOTS = path.join(import.meta.dirname, "screenshots");

/** A full-page screenshot for the CI output (e2e/screenshots/, not committed). */
/** The page's own error messages: Next.js's route announcer is an alert too, holding the new page's title after a navigation. */
export const pageAlert = (page: Page) => page.locator('[role="alert"]:not(#__next-route-announcer__)');

export async function screenshot(page: Page, name: string) {
  fs.mkdirSync(SHOTS, { recursive: true });
  await page.screenshot({ path: path.join(SHOTS, `${name}.png`), fullPage: true });
}

/** The public API with a secret key, JSON in and out. */
export async function api<T = any>(key: string, method: string, apiPath: string, body?: Record<string, unknown>): Promise<T> {
  const res = await fetch(`${baseUrl()}${apiPath}`, {
    method,
    headers: { authorization: `Bearer ${key}`, ...(body ? { "content-type": "application/json" } : {}) },
    body: body ? JSON.stringify(body) : undefined,
  });
  const json = await res.json();
  if (!res.ok) throw new Error(`${method} ${apiPath} → ${res.status}: ${JSON.stringify(json)}`);
  return json as T;
}

/** A transaction intent through the API: `amount` of the registered test token minted to `to`, sponsored by `policy`. */
export function sponsoredMint(key: string, ids: { player: string; policy: string; contract: string; to: string }, amount = "1000") {
  return api<{ id: string }>(key, "POST", "/v1/transaction_intents", {
    chainId: CHAIN_ID,
    player: ids.player,
    policy: ids.policy,
    interactions: [{ contract: ids.contract, functionName: "mint", functionArgs: [ids.to, amount] }],
  });
}

export async function rpc<T = any>(method: string, params: unknown[]): Promise<T> {
  const res = await fetch(rpcUrl(), { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ jsonrpc: "2.0", id: 1, method, params }) });
  const json = (await res.json()) as { result?: T; error?: { message: string } };
  if (json.error) throw new Error(`${method}: ${json.error.message}`);
  return json.result as T;
}

/** The transaction's receipt, once mined. */
export async function rpcReceipt(hash: `0x${string}`) {
  for (;;) {
    const receipt = await rpc<{ contractAddress: `0x${string}`; status: string } | null>("eth_getTransactionReceipt", [hash]);
    if (receipt) return receipt;
    await new Promise((r) => setTimeout(r, 200));
  }
}

/** A fresh key with 100 ETH on the local anvil chain. */
export async function fundedWallet() {
  const account = privateKeyToAccount(generatePrivateKey());
  await rpc("anvil_setBalance", [account.address, toHex(parseEther("100"))]);
  return createWalletClient({ account, transport: http(rpcUrl()), chain: { id: CHAIN_ID, name: "Anvil", nativeCurrency: { name: "Ether", symbol: "ETH", decimals: 18 }, rpcUrls: { default: { http: [rpcUrl()] } } } });
}

/**
 * A browser wallet for the page: `window.ethereum`, an EIP-1193 provider whose accounts and
 * signatures come from `privateKey` (held here, in the test process), and whose other calls go
 * to the anvil node, as a real extension forwards them to its RPC.
 */
export async function injectWallet(page: Page, privateKey: Hex) {
  const account = privateKeyToAccount(privateKey);
  await page.exposeFunction("__e2eWallet", async (method: string, params: unknown[]) => {
    switch (method) {
      case "eth_requestAccounts":
      case "eth_accounts":
        return [account.address];
      case "eth_chainId":
        return toHex(CHAIN_ID);
      case "personal_sign":
        return account.signMessage({ message: { raw: (params as [Hex])[0] } });
      case "wallet_requestPermissions":
      case "wallet_getPermissions":
        return [{ parentCapability: "eth_accounts" }];
      case "wallet_switchEthereumChain":
        return null;
      default:
        return rpc(method, params ?? []);
    }
  });
  await page.addInitScript(() => {
    const listeners = new Map<string, Set<(...args: unknown[]) => void>>();
    const w = window as unknown as { __e2eWallet: (m: string, p: unknown[]) => Promise<unknown>; ethereum: unknown };
    w.ethereum = {
      isE2EWallet: true,
      request: ({ method, params }: { method: string; params?: unknown[] }) => w.__e2eWallet(method, params ?? []),
      on: (event: string, fn: (...args: unknown[]) => void) => {
        if (!listeners.has(event)) listeners.set(event, new Set());
        listeners.get(event)!.add(fn);
      },
      removeListener: (event: string, fn: (...args: unknown[]) => void) => listeners.get(event)?.delete(fn),
    };
  });
  return account;
}

/**
 * Signs up through the page, as a new developer would: on /signup, or on the page of a claim or
 * invitation link (`from`), whose form fills the email itself for an invitation.
 */
export async function signUp(page: Page, developer: { name: string; email: string; password: string; organization?: string }, from = `${baseUrl()}/signup`) {
  await page.goto(from);
  await page.getByLabel("Your name").fill(developer.name);
  const email = page.getByLabel("Email");
  if (await email.isEditable()) await email.fill(developer.email);
  await page.getByLabel("Password").fill(developer.password);
  if (developer.organization) await page.getByLabel("Organization").fill(developer.organization);
  await page.getByRole("button", { name: "Create account" }).click();
  await page.waitForURL(/\/projects\/pro_[^/]+\/test$/);
  return new URL(page.url()).pathname;
}

/** Signs in on /login with a developer's email and password, and waits for the project's overview at `base`. */
export async function signIn(page: Page, developer: { email: string; password: string }, base: string) {
  await page.goto(`${baseUrl()}/login`);
  await page.getByLabel("Email").fill(developer.email);
  await page.getByLabel("Password").fill(developer.password);
  await page.getByRole("button", { name: "Sign in" }).click();
  await page.waitForURL(`**${base}`);
}

/**
 * Pages a test opens (optionally with a browser wallet for `walletKey`), each checked for console errors and closed
 * after the test: call once at the top of a spec file.
 */
export function trackedPages() {
  const pages: { page: Page; errors: string[] }[] = [];
  test.afterEach(async () => {
    for (const { page, errors } of pages.splice(0)) {
      expect(errors, "browser console errors").toEqual([]);
      await page.context().close();
    }
  });
  return async function openPage(browser: Browser, walletKey?: Hex) {
    const opened = await newPage(browser);
    if (walletKey) await injectWallet(opened.page, walletKey);
    pages.push(opened);
    return opened;
  };
}
