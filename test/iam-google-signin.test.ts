import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { getDb } from "@/lib/db/client";
import { clearProviderCaches } from "@/lib/iam/providers";
import { verifyPlayerToken } from "@/lib/iam/tokens";
import type { ProjectWithKeys } from "@/lib/projects/service";
import { call, expectError, newProject } from "./api";
import { startIssuer, type TestIssuer } from "./oidc-issuer";

const CALLBACK = "http://127.0.0.1:3000/iam/v1/oauth/google/callback";
let issuer: TestIssuer;
let project: ProjectWithKeys;
let pk: string;

beforeAll(async () => {
  clearProviderCaches();
  issuer = await startIssuer({
    clients: [{ client_id: "game-web", client_secret: "web-secret-0123456789", redirectUris: [CALLBACK] }],
    accounts: { alice: { email: "alice@example.com", email_verified: true, name: "Alice" }, bob: { email: "bob@example.com", email_verified: true } },
  });
  project = await newProject("google sign-in");
  pk = project.keys.test.publishable;
  const configured = await call("POST", "/iam/v1/oauth", { key: project.keys.test.secret, json: { provider: "google", enabled: true, clientId: "game-web", clientSecret: "web-secret-0123456789", baseUrl: issuer.issuer } });
  expect(configured.status, JSON.stringify(configured.body)).toBe(200);
});
afterAll(() => issuer?.close());

/** The game's side: a sign-in URL and key; the browser's side: the provider, then our callback. */
async function browserSignIn(account: string, query: Record<string, string> = {}) {
  const started = await call("GET", "/iam/v1/oauth/google/signin_url", { key: pk, basic: true, query });
  expect(started.status, JSON.stringify(started.body)).toBe(200);
  const back = await issuer.authorize(started.body.url, account);
  expect(back.origin + back.pathname).toBe(CALLBACK);
  const landed = await call("GET", `${back.pathname}${back.search}`);
  return { started: started.body as { url: string; key: string; expiresAt: number }, back, landed };
}

describe("Google sign-in in the browser (authorization code + PKCE against the configured issuer)", () => {
  it("starts with state, nonce and an S256 challenge, lands on our callback, and hands the game the player and tokens once", async () => {
    const { started, back, landed } = await browserSignIn("alice");
    const url = new URL(started.url);
    expect(url.origin + url.pathname).toBe(`${issuer.base}/auth`);
    expect(Object.fromEntries(url.searchParams)).toMatchObject({ client_id: "game-web", redirect_uri: CALLBACK, response_type: "code", scope: "openid email profile", code_challenge_method: "S256" });
    for (const name of ["state", "nonce", "code_challenge"]) expect(url.searchParams.get(name)?.length).toBeGreaterThanOrEqual(22);
    expect(back.searchParams.get("code")).toBeTruthy();
    expect(landed.status).toBe(200);

    const collected = await call("GET", "/iam/v1/oauth/google/token", { key: pk, basic: true, query: { key: started.key } });
    expect(collected.status, JSON.stringify(collected.body)).toBe(200);
    expect(collected.body.player.linkedAccounts).toEqual([expect.objectContaining({ provider: "google", externalUserId: "alice", email: "alice@example.com" })]);
    expect(await verifyPlayerToken(await getDb(), collected.body.token)).toMatchObject({ projectId: project.id, playerId: collected.body.player.id });
    // Once only; the same person signing in again is the same player.
    expect(expectError(await call("GET", "/iam/v1/oauth/google/token", { key: pk, basic: true, query: { key: started.key } }), 409).message).toMatch(/already collected/);
    const again = await browserSignIn("alice");
    const second = await call("GET", "/iam/v1/oauth/google/token", { key: pk, basic: true, query: { key: again.started.key } });
    expect(second.body.player.id).toBe(collected.body.player.id);
  });

  it("refuses a replayed or forged callback, a result asked for too early, another project's key, and sends the browser to redirectTo", async () => {
    const started = await call("GET", "/iam/v1/oauth/google/signin_url", { key: pk, basic: true, query: { redirectTo: "https://game.example/after" } });
    expect(expectError(await call("GET", "/iam/v1/oauth/google/token", { key: pk, basic: true, query: { key: started.body.key } }), 409).message).toMatch(/not finished/);
    const back = await issuer.authorize(started.body.url, "bob");
    // A state we never issued, or a code with another state, opens nothing.
    expectError(await call("GET", `/iam/v1/oauth/google/callback?state=forged&code=${back.searchParams.get("code")}`), 400);
    const landed = await call("GET", `${back.pathname}${back.search}`);
    expect(landed.status).toBe(302);
    expect(landed.headers.get("location")).toBe("https://game.example/after?signin=success");
    // The same callback again (a reload, or a replay): the state is spent.
    expectError(await call("GET", `${back.pathname}${back.search}`), 400);
    const other = await newProject("google elsewhere");
    expectError(await call("GET", "/iam/v1/oauth/google/token", { key: other.keys.test.publishable, basic: true, query: { key: started.body.key } }), 404);
    expect((await call("GET", "/iam/v1/oauth/google/token", { key: pk, basic: true, query: { key: started.body.key } })).status).toBe(200);
  });

  it("records a refusal by the provider and a code that does not exchange, and says so to the game", async () => {
    const denied = await call("GET", "/iam/v1/oauth/google/signin_url", { key: pk, basic: true });
    const state = new URL(denied.body.url).searchParams.get("state");
    const page = await call("GET", `/iam/v1/oauth/google/callback?state=${state}&error=access_denied`);
    expect(page.status).toBe(400);
    expect(expectError(await call("GET", "/iam/v1/oauth/google/token", { key: pk, basic: true, query: { key: denied.body.key } }), 400).message).toMatch(/access_denied/);

    const bogus = await call("GET", "/iam/v1/oauth/google/signin_url", { key: pk, basic: true });
    const bogusState = new URL(bogus.body.url).searchParams.get("state");
    expect((await call("GET", `/iam/v1/oauth/google/callback?state=${bogusState}&code=not-a-code`)).status).toBe(400);
    expect(expectError(await call("GET", "/iam/v1/oauth/google/token", { key: pk, basic: true, query: { key: bogus.body.key } }), 400).message).toMatch(/token endpoint answered 400/);
  });

  it("needs google configured with a client secret, a publishable key, and valid parameters", async () => {
    const bare = await newProject("google unconfigured");
    expect(expectError(await call("GET", "/iam/v1/oauth/google/signin_url", { key: bare.keys.test.publishable, basic: true }), 400).details?.provider).toBeDefined();
    expect(expectError(await call("GET", "/iam/v1/oauth/google/signin_url", { key: pk, basic: true, query: { redirectTo: "javascript:alert(1)" } }), 400).details?.redirectTo).toBeDefined();
    expectError(await call("GET", "/iam/v1/oauth/google/signin_url"), 401);
    expectError(await call("GET", "/iam/v1/oauth/google/token", { key: pk, basic: true }), 400);
    expectError(await call("GET", "/iam/v1/oauth/google/callback"), 400);
  });
});
