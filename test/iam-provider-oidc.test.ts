import crypto from "node:crypto";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { exportSPKI, generateKeyPair, importJWK, SignJWT, type JWK } from "jose";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ProjectWithKeys } from "@/lib/projects/service";
import { call, expectError, newProject } from "./helpers/api";
import { signingKey, startIssuer, type TestIssuer } from "./helpers/oidc-issuer";

/**
 * The OIDC family against real OpenID providers (oidc-provider) on 127.0.0.1: every ID token here
 * comes out of an authorization-code flow; the only tokens made by hand are the forgeries.
 */

const SECRET = "client-secret-of-the-game-0000";
const accounts = {
  alice: { email: "alice@example.com", email_verified: true, name: "Alice" },
  bob: { email: "bob@example.com", email_verified: false, name: "Bob" },
  carol: { name: "Carol" },
  // Claims Alice's address without the provider vouching for it.
  mallory: { email: "alice@example.com", email_verified: false, name: "Mallory" },
};
let key: JWK;
let main: TestIssuer; // the game's provider
let twin: TestIssuer; // same signing keys, another issuer
let firebase: TestIssuer;
let supabase: TestIssuer;
let project: ProjectWithKeys;
let sk: string;

beforeAll(async () => {
  key = await signingKey();
  [main, twin, firebase, supabase] = await Promise.all([
    startIssuer({
      clients: [
        { client_id: "game-client", client_secret: SECRET },
        { client_id: "other-app", client_secret: SECRET },
        { client_id: "short-lived", client_secret: SECRET, idTokenTtl: 1 },
      ],
      accounts,
      keys: [key],
    }),
    startIssuer({ clients: [{ client_id: "game-client", client_secret: SECRET }], accounts, keys: [key] }),
    startIssuer({ clients: [{ client_id: "demo-proj", client_secret: SECRET }], accounts, issuer: () => "https://securetoken.google.com/demo-proj" }),
    startIssuer({ clients: [{ client_id: "authenticated", client_secret: SECRET }], accounts, mount: "/auth/v1", jwksPath: "/.well-known/jwks.json" }),
  ]);
  project = await newProject("oidc providers");
  sk = project.keys.test.secret;
  const pem = await exportSPKI((await importJWK({ ...key, d: undefined, p: undefined, q: undefined, dp: undefined, dq: undefined, qi: undefined }, "RS256")) as CryptoKey);
  for (const json of [
    { provider: "google", enabled: true, clientId: "game-client", clientSecret: SECRET, baseUrl: main.issuer },
    { provider: "oidc", enabled: true, aud: "game-client", baseUrl: main.issuer },
    { provider: "custom", enabled: true, aud: "game-client", publicVerificationKey: pem, baseUrl: main.issuer },
    { provider: "firebase", enabled: true, projectId: "demo-proj", jwksUrl: firebase.jwksUrl },
    { provider: "supabase", enabled: true, url: supabase.base.replace(/\/auth\/v1$/, "") },
  ]) {
    const res = await call("POST", "/iam/v1/oauth", { key: sk, json });
    if (res.status !== 200) throw new Error(JSON.stringify(res.body));
  }
});

afterAll(async () => {
  await Promise.all([main, twin, firebase, supabase].map((i) => i?.close()));
});

const authorize = (provider: string, token: string, key = sk) => call("POST", `/iam/v1/oauth/${provider}/authorize`, { key, json: { token } });
const authPlayerOf = async (token: string, key = sk) => (await call("POST", "/iam/v1/authorize", { key, json: { authorizationCode: token } })).body;

describe("OIDC providers", () => {
  it("google: authorize creates the player from a real ID token, then finds the same one; verify and lookup answer it", async () => {
    const first = await authorize("google", await main.idToken("game-client", "alice"));
    expect(first.status).toBe(200);
    expect(first.body).toEqual({ playerId: expect.stringMatching(/^pla_/), token: expect.any(String), refreshToken: expect.any(String) });
    const me = await authPlayerOf(first.body.token);
    expect(me).toMatchObject({ id: first.body.playerId, object: "player", email: "alice@example.com", name: "Alice" });
    expect(me.linkedAccounts).toEqual([expect.objectContaining({ provider: "google", externalUserId: "alice", email: "alice@example.com", disabled: false })]);

    const again = await call("POST", "/iam/v1/oauth/google/authorize", { key: sk, form: { token: await main.idToken("game-client", "alice") } });
    expect(again.body.playerId).toBe(first.body.playerId);
    expect(again.body.token).not.toBe(first.body.token);

    const verified = await call("POST", "/iam/v1/oauth/verify", { key: sk, json: { provider: "google", token: await main.idToken("game-client", "alice"), tokenType: "idToken" } });
    expect(verified.status).toBe(200);
    expect(verified.body).toMatchObject({ id: first.body.playerId, object: "player", livemode: false, accounts: [], transactionIntents: [] });
    const form = await call("POST", "/iam/v1/oauth/verify", { key: sk, form: { provider: "google", token: await main.idToken("game-client", "alice"), tokenType: "idToken", expand: ["accounts"] } });
    expect(form.body).toEqual(verified.body);
    const deprecated = await call("POST", "/iam/v1/oauth/google/verify", { key: sk, json: { token: await main.idToken("game-client", "alice") } });
    expect(deprecated.body.id).toBe(first.body.playerId);
    const lookup = await call("GET", "/iam/v1/oauth/google/user/alice", { key: sk });
    expect(lookup.body).toEqual(verified.body);
    expectError(await call("GET", "/iam/v1/oauth/google/user/nobody", { key: sk }), 404);
  });

  it("verify answers 404 for a good token whose identity has no player yet", async () => {
    const error = expectError(await call("POST", "/iam/v1/oauth/verify", { key: sk, json: { provider: "google", token: await main.idToken("game-client", "carol"), tokenType: "idToken" } }), 404);
    expect(error.message).toContain("No player is linked");
  });

  it("refuses tokens for another audience, from another issuer, forged, malformed or expired: 401, no player made", async () => {
    const before = (await call("GET", "/iam/v1/players", { key: sk })).body.total;
    const refused = async (token: string, reason: RegExp, provider = "google") => {
      const error = expectError(await authorize(provider, token), 401, "authentication_error");
      expect(error.message).toMatch(reason);
      expect(error.message).not.toContain(token);
    };
    await refused(await main.idToken("other-app", "carol"), /another audience/);
    await refused(await twin.idToken("game-client", "carol"), /another issuer/);
    // Signed by a key that is not the provider's, under the provider's key id and with its claims.
    const { privateKey } = await generateKeyPair("RS256");
    const claims = { sub: "carol", email: "carol@example.com", email_verified: true };
    const forged = await new SignJWT(claims).setProtectedHeader({ alg: "RS256", kid: key.kid }).setIssuer(main.issuer).setAudience("game-client").setIssuedAt().setExpirationTime("1h").sign(privateKey);
    await refused(forged, /signature/);
    await refused(forged, /signature/, "oidc");
    await refused(forged, /signature/, "custom");
    const unsigned = `${Buffer.from(JSON.stringify({ alg: "none" })).toString("base64url")}.${Buffer.from(JSON.stringify({ ...claims, iss: main.issuer, aud: "game-client", exp: 9e9 })).toString("base64url")}.`;
    await refused(unsigned, /./);
    await refused("not-a-jwt", /well-formed/);
    // A player signing in to another app of the same provider is not signed in here.
    await refused(await main.idToken("other-app", "alice"), /another audience/, "oidc");
    expect((await call("GET", "/iam/v1/players", { key: sk })).body.total).toBe(before);
  });

  it("refuses an expired ID token", async () => {
    const shortLived = await newProject();
    await call("POST", "/iam/v1/oauth", { key: shortLived.keys.test.secret, json: { provider: "oidc", aud: "short-lived", jwksUrl: main.jwksUrl } });
    const token = await main.idToken("short-lived", "carol");
    await new Promise((r) => setTimeout(r, 6500)); // 1 s lifetime + 5 s clock leeway
    const error = expectError(await authorize("oidc", token, shortLived.keys.test.secret), 401);
    expect(error.message).toContain("expired");
  });

  it("links a new identity to an existing player only by an email both providers assert verified", async () => {
    const google = (await authorize("google", await main.idToken("game-client", "alice"))).body;
    const viaOidc = await authorize("oidc", await main.idToken("game-client", "alice"));
    expect(viaOidc.body.playerId).toBe(google.playerId);
    const linked = await authPlayerOf(viaOidc.body.token);
    expect(linked.linkedAccounts.map((l: { provider: string }) => l.provider).sort()).toEqual(["google", "oidc"]);

    // The same address unverified joins nobody: it gets a player of its own.
    const mallory = (await authorize("oidc", await main.idToken("game-client", "mallory"))).body;
    expect(mallory.playerId).not.toBe(google.playerId);

    // Bob's provider does not vouch for his email: each provider's identity gets a player of its own.
    const bobGoogle = (await authorize("google", await main.idToken("game-client", "bob"))).body;
    const bobOidc = (await authorize("oidc", await main.idToken("game-client", "bob"))).body;
    expect(bobOidc.playerId).not.toBe(bobGoogle.playerId);
    const custom = (await authorize("custom", await main.idToken("game-client", "bob"))).body;
    expect(new Set([bobGoogle.playerId, bobOidc.playerId, custom.playerId]).size).toBe(3);
  });

  it("concurrent first sign-ins of one identity make one player", async () => {
    const tokens = await Promise.all(Array.from({ length: 4 }, () => main.idToken("game-client", "carol")));
    const answers = await Promise.all(tokens.map((t) => authorize("custom", t)));
    expect(answers.map((a) => a.status)).toEqual([200, 200, 200, 200]);
    expect(new Set(answers.map((a) => a.body.playerId)).size).toBe(1);
  });

  it("firebase and supabase: their issuer, audience and keys", async () => {
    const fb = await authorize("firebase", await firebase.idToken("demo-proj", "carol"));
    expect(fb.status).toBe(200);
    expect((await authPlayerOf(fb.body.token)).linkedAccounts[0]).toMatchObject({ provider: "firebase", externalUserId: "carol" });
    const sb = await authorize("supabase", await supabase.idToken("authenticated", "carol"));
    expect(sb.status).toBe(200);
    expect(sb.body.playerId).not.toBe(fb.body.playerId);
    // Each refuses the other's tokens (issuer and keys differ).
    expectError(await authorize("firebase", await supabase.idToken("authenticated", "carol")), 401);
    expectError(await authorize("supabase", await firebase.idToken("demo-proj", "carol")), 401);
    expectError(await authorize("supabase", await main.idToken("game-client", "carol")), 401);
  });

  it("supabase with its JWT secret (HS256): the shared secret is the protocol", async () => {
    const p = await newProject();
    const jwtSecret = "super-secret-jwt-token-with-at-least-32-characters";
    await call("POST", "/iam/v1/oauth", { key: p.keys.test.secret, json: { provider: "supabase", url: "https://abc.supabase.co", jwtSecret } });
    // What Supabase Auth signs for a signed-in user, signed as it does with the project's secret.
    const sign = (secret: string, iss = "https://abc.supabase.co/auth/v1") =>
      new SignJWT({ email: "dana@example.com", user_metadata: { email_verified: true } })
        .setProtectedHeader({ alg: "HS256" })
        .setSubject("0f6c9a0e-1f4b-4c57-9d6e-5e2a3c1b7d20")
        .setIssuer(iss)
        .setAudience("authenticated")
        .setExpirationTime("1h")
        .sign(new TextEncoder().encode(secret));
    const ok = await authorize("supabase", await sign(jwtSecret), p.keys.test.secret);
    expect(ok.status).toBe(200);
    expectError(await authorize("supabase", await sign("another-projects-secret-of-32-characters!"), p.keys.test.secret), 401);
    expectError(await authorize("supabase", await sign(jwtSecret, "https://evil.supabase.co/auth/v1"), p.keys.test.secret), 401);
  });

  it("supabase: an email counts as verified only by a claim the server signs, never by user_metadata (which its users edit)", async () => {
    const p = await newProject();
    const jwtSecret = "super-secret-jwt-token-with-at-least-32-characters";
    await call("POST", "/iam/v1/oauth", { key: p.keys.test.secret, json: { provider: "supabase", url: "https://abc.supabase.co", jwtSecret } });
    // A player whose email is proven here: signed up, then verified with the mailed token.
    const email = `erin-${crypto.randomUUID().slice(0, 8)}@example.com`;
    const signup = await call("POST", "/iam/v1/auth/signup", { key: p.keys.test.publishable, basic: true, json: { email, password: "correct horse battery", name: "Erin" } });
    const vem = (await call("POST", "/iam/v1/password/verify_email/request", { key: p.keys.test.secret, json: { email } })).body.token;
    expect((await call("POST", "/iam/v1/password/verify_email", { key: p.keys.test.publishable, basic: true, json: { token: vem } })).status).toBe(200);
    const sign = (sub: string, claims: Record<string, unknown>) =>
      new SignJWT({ email, ...claims })
        .setProtectedHeader({ alg: "HS256" })
        .setSubject(sub)
        .setIssuer("https://abc.supabase.co/auth/v1")
        .setAudience("authenticated")
        .setExpirationTime("1h")
        .sign(new TextEncoder().encode(jwtSecret));
    // Any Supabase user can call updateUser({ data: { email_verified: true } }): that joins nobody.
    const forged = await authorize("supabase", await sign(crypto.randomUUID(), { user_metadata: { email_verified: true } }), p.keys.test.secret);
    expect(forged.status).toBe(200);
    expect(forged.body.playerId).not.toBe(signup.body.player.id);
    // A top-level email_verified claim (added by the project's custom access token hook, server side) does.
    const hooked = await authorize("supabase", await sign(crypto.randomUUID(), { email_verified: true, user_metadata: {} }), p.keys.test.secret);
    expect(hooked.body.playerId).toBe(signup.body.player.id);
  });

  it("an unconfigured or disabled provider is a 400; a key of the other mode sees nothing", async () => {
    expect(expectError(await authorize("twitter", "token"), 400).details).toHaveProperty("provider");
    const live = expectError(await authorize("google", await main.idToken("game-client", "alice"), project.keys.live.secret), 400);
    expect(live.message).toContain("live mode");
    const p = await newProject();
    await call("POST", "/iam/v1/oauth", { key: p.keys.test.secret, json: { provider: "google", enabled: false, clientId: "game-client", baseUrl: main.issuer } });
    expect(expectError(await authorize("google", await main.idToken("game-client", "alice"), p.keys.test.secret), 400).message).toContain("disabled");
    expectError(await call("POST", "/iam/v1/oauth/verify", { key: sk, json: { provider: "google", token: "x" } }), 400); // tokenType required
    expectError(await call("POST", "/iam/v1/oauth/verify", { key: sk, json: { provider: "myspace", token: "x", tokenType: "idToken" } }), 400);
    expectError(await authorize("myspace", "x"), 404);
  });

  it("fetches a provider's keys once and reuses them (for a few minutes)", async () => {
    const fresh = await startIssuer({ clients: [{ client_id: "game-client", client_secret: SECRET }], accounts });
    try {
      const p = await newProject();
      await call("POST", "/iam/v1/oauth", { key: p.keys.test.secret, json: { provider: "oidc", aud: "game-client", baseUrl: fresh.issuer } });
      for (let i = 0; i < 3; i++) expect((await authorize("oidc", await fresh.idToken("game-client", "carol"), p.keys.test.secret)).status).toBe(200);
      expect(fresh.hits("/.well-known/openid-configuration")).toBe(1);
      expect(fresh.hits("/jwks")).toBe(1);
    } finally {
      await fresh.close();
    }
  });

  it("keys are fetched through the outbound rule: a discovery document pointing at a metadata address is refused (502)", async () => {
    const server = http.createServer((req, res) => {
      const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
      res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ issuer, jwks_uri: "http://169.254.169.254/latest/meta-data/jwks" }));
    });
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    try {
      const p = await newProject();
      const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
      await call("POST", "/iam/v1/oauth", { key: p.keys.test.secret, json: { provider: "oidc", aud: "game-client", baseUrl: issuer } });
      const token = await main.idToken("game-client", "carol");
      const error = expectError(await authorize("oidc", token, p.keys.test.secret), 502, "api_error");
      expect(error.message).toContain("not allowed");
      expect(error.message).not.toContain("meta-data");
    } finally {
      server.close();
    }
  });
});
