import dns from "node:dns";
import http from "node:http";
import https from "node:https";
import Openfort from "@openfort/openfort-node";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from "vitest";
import { clearProviderCaches } from "@/lib/iam/providers";
import { settledRefreshes } from "@/lib/iam/providers/http";
import type { ProjectWithKeys } from "@/lib/projects/service";
import { call, expectError, newProject } from "./helpers/api";
import { routeServer } from "./helpers/sdk-server";

/**
 * Google sign-in where Google cannot be reached: the sign-in URL comes from Google's documented endpoints
 * (its discovery document is fetched in the background, and its failure changes nothing), and a token that is
 * not a well-formed JWT is refused before any request leaves the server. Nothing here reaches a non-loopback
 * address: every host name resolves to "not found", and every outbound connection is recorded.
 */

const AFTER = "https://game.example/after";
let project: ProjectWithKeys;
let server: Awaited<ReturnType<typeof routeServer>>;
let looked: string[];
let connected: string[];

beforeAll(async () => {
  [project, server] = await Promise.all([newProject("google offline"), routeServer()]);
  for (const provider of [
    { provider: "google", enabled: true, clientId: "offline-game", clientSecret: "offline-secret-0123456789", redirectUrls: AFTER },
    { provider: "firebase", enabled: true, projectId: "offline-game" },
  ]) {
    const configured = await call("POST", "/iam/v1/oauth", { key: project.keys.test.secret, json: provider });
    expect(configured.status, JSON.stringify(configured.body)).toBe(200);
  }
});
afterAll(() => server?.close());

beforeEach(() => {
  clearProviderCaches();
  looked = [];
  connected = [];
  // No name resolves (as without a network); loopback names are the test server's.
  const realLookup = dns.promises.lookup.bind(dns.promises);
  vi.spyOn(dns.promises, "lookup").mockImplementation((async (hostname: string, options: dns.LookupOptions) => {
    if (hostname === "localhost") return realLookup(hostname, options as never);
    looked.push(hostname);
    throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: "ENOTFOUND" });
  }) as never);
  for (const mod of [http, https]) {
    const real = mod.request.bind(mod) as (...args: unknown[]) => http.ClientRequest;
    vi.spyOn(mod, "request").mockImplementation(((...args: unknown[]) => {
      const opts = args.find((a) => typeof a === "object" && a !== null && !(a instanceof URL)) as http.RequestOptions | undefined;
      connected.push(String(opts?.host ?? opts?.hostname ?? args[0]));
      return real(...args);
    }) as never);
  }
});
afterEach(async () => {
  await settledRefreshes();
  vi.restoreAllMocks();
});

const signinUrl = (query: Record<string, string> = {}) => call("GET", "/iam/v1/oauth/google/signin_url", { key: project.keys.test.publishable, basic: true, query });

describe("Google sign-in without reaching Google where none is needed", () => {
  it("builds the sign-in URL from Google's documented endpoints when its discovery document cannot be fetched, and tries discovery again only later", async () => {
    const started = await signinUrl({ redirectTo: AFTER });
    expect(started.status, JSON.stringify(started.body)).toBe(200);
    const url = new URL(started.body.url);
    expect(url.origin + url.pathname).toBe("https://accounts.google.com/o/oauth2/v2/auth");
    expect(Object.fromEntries(url.searchParams)).toMatchObject({ client_id: "offline-game", response_type: "code", scope: "openid email profile", code_challenge_method: "S256" });
    expect(started.body.key.length).toBeGreaterThanOrEqual(43);
    // Discovery was tried in the background (and failed: no address), never awaited by the request.
    await settledRefreshes();
    expect(looked).toEqual(["accounts.google.com"]);
    expect(connected).toEqual([]);

    // A second sign-in within the retry interval does not ask again, and still works.
    const again = await signinUrl();
    expect(again.status, JSON.stringify(again.body)).toBe(200);
    expect(new URL(again.body.url).host).toBe("accounts.google.com");
    expect(again.body.key).not.toBe(started.body.key);
    await settledRefreshes();
    expect(looked).toEqual(["accounts.google.com"]);
  });

  it("the browser's return exchanges the code at Google's documented token endpoint (unreachable here: the sign-in fails, saying so)", async () => {
    const started = await signinUrl({ redirectTo: AFTER });
    expect(started.status, JSON.stringify(started.body)).toBe(200);
    const state = new URL(started.body.url).searchParams.get("state")!;
    const back = await call("GET", "/iam/v1/oauth/google/callback", { query: { state, code: "offline-code" } });
    expect(back.status).toBe(302);
    const location = new URL(back.headers.get("location")!);
    expect(location.origin + location.pathname).toBe(AFTER);
    expect(location.searchParams.get("signin")).toBe("failed");
    const collected = expectError(await call("GET", "/iam/v1/oauth/google/token", { key: project.keys.test.publishable, basic: true, query: { key: started.body.key } }), 400);
    expect(collected.message).toMatch(/^google sign-in failed: https:\/\/oauth2\.googleapis\.com could not be reached/);
    await settledRefreshes();
    expect(looked).toContain("oauth2.googleapis.com");
    expect(connected).toEqual([]);
  });

  it("an issuer with no documented endpoints (a configured baseUrl) still needs its discovery document: 502 naming it", async () => {
    const other = await newProject("google custom issuer");
    const configured = await call("POST", "/iam/v1/oauth", {
      key: other.keys.test.secret,
      form: { provider: "google", enabled: "true", clientId: "c", clientSecret: "offline-secret-0123456789", baseUrl: "https://issuer.example", redirectUrls: AFTER },
    });
    expect(configured.status, JSON.stringify(configured.body)).toBe(200);
    const failed = expectError(await call("GET", "/iam/v1/oauth/google/signin_url", { key: other.keys.test.publishable, basic: true }), 502);
    expect(failed.message).toMatch(/Could not reach google: https:\/\/issuer\.example could not be reached/);
    expect(connected).toEqual([]);
  });

  it("refuses a token that is not a well-formed JWT with a 401 before any network call (verify, the deprecated verify, authorize; JSON and form bodies)", async () => {
    const sk = project.keys.test.secret;
    const malformed = [
      "not-a-jwt",
      "forged.token.value",
      "eyJhbGciOiJSUzI1NiJ9.bm90IGpzb24.c2ln", // a JSON header, a payload that is not JSON
      "bm90IGpzb24.eyJzdWIiOiJ4In0.c2ln", // a header that is not JSON
      "eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJ4In0", // two parts
      "eyJhbGciOiJSU0EtT0FFUCIsImVuYyI6IkEyNTZHQ00ifQ.a.b.c.d", // five parts: an encrypted JWT
    ];
    for (const provider of ["google", "firebase"]) {
      for (const token of malformed) {
        const answers = [
          await call("POST", "/iam/v1/oauth/verify", { key: sk, json: { provider, token, tokenType: "idToken" } }),
          await call("POST", "/iam/v1/oauth/verify", { key: sk, form: { provider, token, tokenType: "idToken" } }),
          await call("POST", `/iam/v1/oauth/${provider}/verify`, { key: sk, json: { token } }),
          await call("POST", `/iam/v1/oauth/${provider}/verify`, { key: sk, form: { token, tokenType: "idToken" } }),
          await call("POST", `/iam/v1/oauth/${provider}/authorize`, { key: sk, json: { token } }),
          await call("POST", `/iam/v1/oauth/${provider}/authorize`, { key: sk, form: { token } }),
        ];
        for (const answer of answers) {
          const error = expectError(answer, 401);
          expect(error.type).toBe("authentication_error");
          expect(error.message).toBe(`Invalid ${provider} token: it is not a well-formed JWT (a compact JWS: header.payload.signature).`);
        }
      }
    }
    await settledRefreshes();
    expect(looked).toEqual([]);
    expect(connected).toEqual([]);
  });

  it("the official SDK's verifyOAuthToken gets the 401 for a malformed token", async () => {
    const openfort = new Openfort(project.keys.test.secret, server.url);
    await expect(openfort.iam.verifyOAuthToken({ provider: "google" as never, token: "forged.token.value", tokenType: "idToken" })).rejects.toMatchObject({ code: 401 });
    expect(looked).toEqual([]);
    // The SDK's own request to the test server is the only connection.
    expect(connected.filter((host) => !/^(127\.0\.0\.1|localhost)(:\d+)?$/.test(host))).toEqual([]);
    expect(connected.length).toBeGreaterThan(0);
  });

  it("a well-formed token for Google's issuer is checked with Google's documented JWKS URL when discovery is out of reach (502 here: no network)", async () => {
    const header = Buffer.from(JSON.stringify({ alg: "RS256", kid: "k1" })).toString("base64url");
    const payload = Buffer.from(JSON.stringify({ sub: "x", aud: "offline-game", iss: "https://accounts.google.com", exp: Math.floor(Date.now() / 1000) + 60 })).toString("base64url");
    const failed = expectError(await call("POST", "/iam/v1/oauth/google/authorize", { key: project.keys.test.secret, json: { token: `${header}.${payload}.c2ln` } }), 502);
    expect(failed.message).toMatch(/https:\/\/www\.googleapis\.com could not be reached/);
    await settledRefreshes();
    expect(looked.sort()).toEqual(["accounts.google.com", "www.googleapis.com"]);
    expect(connected).toEqual([]);
  });
});
