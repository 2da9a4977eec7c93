import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { getDb } from "@/lib/db/client";
import { clearProviderCaches } from "@/lib/iam/providers";
import { verifyPlayerToken } from "@/lib/iam/tokens";
import type { ProjectWithKeys } from "@/lib/projects/service";
import { call, expectError, newProject } from "./helpers/api";
import { startIssuer, type TestIssuer } from "./helpers/oidc-issuer";

const CALLBACK = "http://127.0.0.1:3000/iam/v1/oauth/google/callback";
const AFTER = "https://game.example/after";
const POPUP = "https://game.example/popup";
let issuer: TestIssuer;
let project: ProjectWithKeys;
let pk: string;

beforeAll(async () => {
  clearProviderCaches();
  issuer = await startIssuer({
    clients: [{ client_id: "game-web", client_secret: "web-secret-0123456789", redirectUris: [CALLBACK] }],
    accounts: {
      alice: { email: "alice@example.com", email_verified: true, name: "Alice" },
      bob: { email: "bob@example.com", email_verified: true },
      victim: { email: "victim@example.com", email_verified: true, name: "Victim" },
    },
  });
  project = await newProject("google sign-in");
  pk = project.keys.test.publishable;
  const configured = await call("POST", "/iam/v1/oauth", {
    key: project.keys.test.secret,
    json: { provider: "google", enabled: true, clientId: "game-web", clientSecret: "web-secret-0123456789", baseUrl: issuer.issuer, redirectUrls: `${AFTER}\n${POPUP}` },
  });
  expect(configured.status, JSON.stringify(configured.body)).toBe(200);
  expect(configured.body.redirectUrls).toBe(`${AFTER}\n${POPUP}`);
});
afterAll(() => issuer?.close());
afterEach(() => {
  vi.unstubAllEnvs();
});

type Started = { url: string; key: string; expiresAt: number };

/** The game's side: a sign-in URL and key. */
async function start(query: Record<string, string> = {}): Promise<Started> {
  const started = await call("GET", "/iam/v1/oauth/google/signin_url", { key: pk, basic: true, query });
  expect(started.status, JSON.stringify(started.body)).toBe(200);
  return started.body;
}

/** The browser's side: the provider's consent as `account`, then our callback, which sends the browser on. */
async function complete(url: string, account: string) {
  const back = await issuer.authorize(url, account);
  expect(back.origin + back.pathname).toBe(CALLBACK);
  const landed = await call("GET", `${back.pathname}${back.search}`);
  return { back, landed, location: landed.headers.get("location") ? new URL(landed.headers.get("location")!) : null };
}

const collect = (query: Record<string, string>, key = pk) => call("GET", "/iam/v1/oauth/google/token", { key, basic: true, query });

describe("Google sign-in in the browser (authorization code + PKCE against the configured issuer)", () => {
  it("starts with state, nonce and an S256 challenge, sends the browser to redirectTo with a one-time code, and hands the player and tokens once to key + code", async () => {
    const started = await start({ redirectTo: AFTER });
    const url = new URL(started.url);
    expect(url.origin + url.pathname).toBe(`${issuer.base}/auth`);
    expect(Object.fromEntries(url.searchParams)).toMatchObject({ client_id: "game-web", redirect_uri: CALLBACK, response_type: "code", scope: "openid email profile", code_challenge_method: "S256" });
    for (const name of ["state", "nonce", "code_challenge"]) expect(url.searchParams.get(name)?.length).toBeGreaterThanOrEqual(22);

    const { back, landed, location } = await complete(started.url, "alice");
    expect(back.searchParams.get("code")).toBeTruthy();
    expect(landed.status).toBe(302);
    expect(landed.headers.get("referrer-policy")).toBe("no-referrer");
    expect(location!.origin + location!.pathname).toBe(AFTER);
    expect(location!.searchParams.get("signin")).toBe("success");
    const code = location!.searchParams.get("code")!;
    expect(code.length).toBeGreaterThanOrEqual(43);
    expect(code).not.toBe(started.key);

    const collected = await collect({ key: started.key, code });
    expect(collected.status, JSON.stringify(collected.body)).toBe(200);
    expect(collected.body.player.linkedAccounts).toEqual([expect.objectContaining({ provider: "google", externalUserId: "alice", email: "alice@example.com" })]);
    expect(await verifyPlayerToken(await getDb(), collected.body.token)).toMatchObject({ projectId: project.id, playerId: collected.body.player.id });
    // Once only; the same person signing in again is the same player.
    expect(expectError(await collect({ key: started.key, code }), 409).message).toMatch(/already collected/);
    // Without redirectTo the browser goes to the first allow-listed URL; a query of the game's own is kept.
    const again = await start();
    const second = await complete(again.url, "alice");
    expect(second.location!.origin + second.location!.pathname).toBe(AFTER);
    const withQuery = await start({ redirectTo: `${POPUP}?level=3` });
    const third = await complete(withQuery.url, "alice");
    expect(third.location!.origin + third.location!.pathname).toBe(POPUP);
    expect(third.location!.searchParams.get("level")).toBe("3");
    const secondCollected = await collect({ key: again.key, code: second.location!.searchParams.get("code")! });
    expect(secondCollected.body.player.id).toBe(collected.body.player.id);
  });

  it("never hands a victim's sign-in to the client that started it: the key alone (or with a wrong code) is refused, only the browser's code with the key works", async () => {
    // The attacker asks for a sign-in URL with the game's public key, and keeps the key.
    const attacker = await start({ redirectTo: AFTER });
    // The victim is sent to the genuine consent screen, consents, and our callback sends the victim's browser on.
    const victim = await complete(attacker.url, "victim");
    expect(victim.landed.status).toBe(302);
    const victimCode = victim.location!.searchParams.get("code")!;
    expect(victim.location!.origin + victim.location!.pathname).toBe(AFTER);

    // The attacker polls with the key: refused, however often, with or without a guessed code.
    for (let i = 0; i < 3; i++) {
      const polled = await collect({ key: attacker.key });
      expect(expectError(polled, 400).details?.code).toBeDefined();
      expect(JSON.stringify(polled.body)).not.toMatch(/victim@example\.com|eyJ/);
    }
    const guessed = await collect({ key: attacker.key, code: "A".repeat(43) });
    expect(expectError(guessed, 400).details?.code).toBeDefined();
    expect(JSON.stringify(guessed.body)).not.toMatch(/victim@example\.com|eyJ/);
    // The code alone, or with another sign-in's key (the game's page in the victim's browser started its own), is refused too:
    // an attacker's code planted in a victim's page signs nobody in.
    const victimsOwn = await start({ redirectTo: AFTER });
    const ownCode = (await complete(victimsOwn.url, "alice")).location!.searchParams.get("code")!;
    expect(expectError(await collect({ key: victimsOwn.key, code: victimCode }), 400).details?.code).toBeDefined();
    expect((await collect({ key: victimsOwn.key, code: ownCode })).body.player.linkedAccounts[0].externalUserId).toBe("alice");
    expectError(await collect({ code: victimCode } as Record<string, string>), 400);
    expectError(await collect({ key: victimCode, code: victimCode }), 404);

    // The client that both started the sign-in and holds what the finishing browser was given gets the result, once.
    const legit = await collect({ key: attacker.key, code: victimCode });
    expect(legit.status, JSON.stringify(legit.body)).toBe(200);
    expect(legit.body.player.linkedAccounts).toEqual([expect.objectContaining({ externalUserId: "victim" })]);
    expectError(await collect({ key: attacker.key, code: victimCode }), 409);
  });

  it("allow-lists redirectTo per project and mode: anything else is a 400 naming it, never a redirect", async () => {
    for (const redirectTo of [
      "https://evil.example/after",
      "https://game.example.evil.example/after",
      "https://game.example/after2",
      "https://game.example/after/x",
      "http://game.example/after",
      "https://game.example:8443/after",
      "https://user@game.example/after",
      "https://game.example/after#frag",
      "//evil.example/after",
      "javascript:alert(1)",
      "/after",
    ]) {
      const refused = await call("GET", "/iam/v1/oauth/google/signin_url", { key: pk, basic: true, query: { redirectTo } });
      const error = expectError(refused, 400);
      expect(error.details?.redirectTo, redirectTo).toBeDefined();
      expect(refused.headers.get("location")).toBeNull();
    }
    // Normalised before comparing: a dot segment cannot walk out of an allowed path.
    expectError(await call("GET", "/iam/v1/oauth/google/signin_url", { key: pk, basic: true, query: { redirectTo: "https://game.example/x/../after/../evil" } }), 400);

    // Another project (or mode) with google configured and no allow-list cannot start a browser sign-in at all.
    const bare = await newProject("google without redirect urls");
    const configured = await call("POST", "/iam/v1/oauth", { key: bare.keys.test.secret, json: { provider: "google", clientId: "game-web", clientSecret: "web-secret-0123456789", baseUrl: issuer.issuer } });
    expect(configured.status).toBe(200);
    for (const query of [{}, { redirectTo: AFTER }]) {
      const error = expectError(await call("GET", "/iam/v1/oauth/google/signin_url", { key: bare.keys.test.publishable, basic: true, query }), 400);
      expect(error.details?.redirectTo?.message).toMatch(/redirectUrls/);
    }
  });

  it("checks the allow-list when it is configured (absolute URLs, no fragment or credentials; https in live mode but for loopback) and an empty value clears it", async () => {
    const other = await newProject("google redirect urls");
    const post = (key: string, redirectUrls: unknown) => call("POST", "/iam/v1/oauth", { key, json: { provider: "google", clientId: "game-web", redirectUrls } });
    for (const bad of ["javascript:alert(1)", "/relative", "ftp://game.example/x", "https://game.example/x#y", "https://u:p@game.example/x", "data:text/html,hi", "not a url"]) {
      expect(expectError(await post(other.keys.test.secret, bad), 400).details?.redirectUrls, bad).toBeDefined();
    }
    const ok = await post(other.keys.test.secret, ["https://game.example/a", "http://localhost:5173/cb", "com.example.game:/oauth"]);
    expect(ok.status, JSON.stringify(ok.body)).toBe(200);
    expect(ok.body.redirectUrls).toBe("https://game.example/a\nhttp://localhost:5173/cb\ncom.example.game:/oauth");
    expect(expectError(await post(other.keys.live.secret, "http://game.example/a"), 400).details?.redirectUrls?.message).toMatch(/https/);
    expect((await post(other.keys.live.secret, "https://game.example/a http://127.0.0.1:8080/cb")).status).toBe(200);
    const live = await call("GET", "/iam/v1/oauth/google", { key: other.keys.live.secret });
    expect(live.body.redirectUrls).toBe("https://game.example/a\nhttp://127.0.0.1:8080/cb");
    const cleared = await post(other.keys.test.secret, "");
    expect(cleared.body.redirectUrls).toBeUndefined();
    // Form-encoded, as the official SDK and the dashboard send it.
    const form = await call("POST", "/iam/v1/oauth", { key: other.keys.test.secret, form: { provider: "google", clientId: "game-web", redirectUrls: ["https://game.example/b", "https://game.example/c"] } });
    expect(form.body.redirectUrls).toBe("https://game.example/b\nhttps://game.example/c");
  });

  it("records a refusal by the provider and a code that does not exchange, and says so to the game (no tokens, no code)", async () => {
    const denied = await start({ redirectTo: AFTER });
    const state = new URL(denied.url).searchParams.get("state");
    const page = await call("GET", `/iam/v1/oauth/google/callback?state=${state}&error=access_denied`);
    expect(page.status).toBe(302);
    const to = new URL(page.headers.get("location")!);
    expect(to.searchParams.get("signin")).toBe("failed");
    expect(to.searchParams.get("code")).toBeNull();
    expect(expectError(await collect({ key: denied.key }), 400).message).toMatch(/access_denied/);

    const bogus = await start({ redirectTo: AFTER });
    const bogusState = new URL(bogus.url).searchParams.get("state");
    expect((await call("GET", `/iam/v1/oauth/google/callback?state=${bogusState}&code=not-a-code`)).status).toBe(302);
    expect(expectError(await collect({ key: bogus.key }), 400).message).toMatch(/token endpoint answered 400/);
  });

  it("refuses a replayed or forged callback, a result asked for too early, and another project's key", async () => {
    const started = await start({ redirectTo: AFTER });
    expect(expectError(await collect({ key: started.key }), 409).message).toMatch(/not finished/);
    const back = await issuer.authorize(started.url, "bob");
    // A state we never issued, or a code with another state, opens nothing.
    expectError(await call("GET", `/iam/v1/oauth/google/callback?state=forged&code=${back.searchParams.get("code")}`), 400);
    const landed = await call("GET", `${back.pathname}${back.search}`);
    expect(landed.status).toBe(302);
    const code = new URL(landed.headers.get("location")!).searchParams.get("code")!;
    // The same callback again (a reload, or a replay): the state is spent.
    expectError(await call("GET", `${back.pathname}${back.search}`), 400);
    const other = await newProject("google elsewhere");
    expectError(await collect({ key: started.key, code }, other.keys.test.publishable), 404);
    expect((await collect({ key: started.key, code })).status).toBe(200);
  });

  it("takes the callback URL from PUBLIC_URL (else the address it listens on) in production, never from Host or X-Forwarded-* headers", async () => {
    const spoofed = { host: "evil.example", "x-forwarded-host": "evil.example", "x-forwarded-proto": "https" };
    const redirectUri = async () => {
      const res = await call("GET", "/iam/v1/oauth/google/signin_url", { key: pk, basic: true, headers: spoofed, query: { redirectTo: AFTER } });
      return res.status === 200 ? new URL(res.body.url).searchParams.get("redirect_uri") : res;
    };
    vi.stubEnv("NODE_ENV", "production");
    vi.stubEnv("PUBLIC_URL", "");
    vi.stubEnv("HOST", "127.0.0.1");
    vi.stubEnv("PORT", "3000");
    expect(await redirectUri()).toBe(CALLBACK);
    vi.stubEnv("PUBLIC_URL", "https://wallet.example/");
    expect(await redirectUri()).toBe("https://wallet.example/iam/v1/oauth/google/callback");
    // Listening on every interface without PUBLIC_URL: no name to trust, so no browser sign-in.
    vi.stubEnv("PUBLIC_URL", "");
    vi.stubEnv("HOST", "0.0.0.0");
    vi.stubEnv("ALLOW_HTTP", "true");
    const refused = await redirectUri();
    expect(typeof refused === "object" && refused && expectError(refused as never, 503).message).toMatch(/PUBLIC_URL/);
  });

  it("needs google configured with a client secret, a publishable key, and valid parameters", async () => {
    const bare = await newProject("google unconfigured");
    expect(expectError(await call("GET", "/iam/v1/oauth/google/signin_url", { key: bare.keys.test.publishable, basic: true }), 400).details?.provider).toBeDefined();
    expect(expectError(await call("GET", "/iam/v1/oauth/google/signin_url", { key: pk, basic: true, query: { redirectTo: "javascript:alert(1)" } }), 400).details?.redirectTo).toBeDefined();
    expectError(await call("GET", "/iam/v1/oauth/google/signin_url"), 401);
    expectError(await call("GET", "/iam/v1/oauth/google/token", { key: pk, basic: true }), 400);
    expectError(await call("GET", "/iam/v1/oauth/google/token", { key: pk, basic: true, query: { key: "k", code: "x".repeat(500) } }), 400);
    expectError(await call("GET", "/iam/v1/oauth/google/callback"), 400);
  });
});
