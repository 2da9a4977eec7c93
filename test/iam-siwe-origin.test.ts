import { afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import type { ProjectWithKeys } from "@/lib/projects/service";
import { call, expectError, newProject } from "./helpers/api";
import { withinOneMinuteWindow } from "./helpers/credentials-fixtures";
import { address, authenticate, from, messageFor, nonceFor, wallet } from "./helpers/siwe-fixtures";

let project: ProjectWithKeys;
let pk: string;
let sk: string;
beforeAll(async () => {
  project = await newProject("siwe origin");
  pk = project.keys.test.publishable;
  sk = project.keys.test.secret;
});
afterEach(() => {
  vi.unstubAllEnvs();
});

const settings = (key: string, body: Record<string, unknown>) => call("POST", "/iam/v1/siwe/settings", { key, json: body });

describe("Sign-In with Ethereum: where a message may come from", () => {
  it("allows loopback hosts and PUBLIC_URL's host in test mode while nothing is configured, nothing in live mode", async () => {
    vi.stubEnv("PUBLIC_URL", "https://wallet.example:8443/");
    const fresh = await newProject("siwe defaults");
    const shown = await call("GET", "/iam/v1/siwe/settings", { key: fresh.keys.test.secret });
    expect(shown.status, JSON.stringify(shown.body)).toBe(200);
    expect(shown.body).toMatchObject({ object: "siweSettings", livemode: false, domains: [], uris: [] });
    expect(shown.body.allowedDomains).toEqual(expect.arrayContaining(["localhost", "127.0.0.1", "wallet.example:8443"]));

    const local = await authenticate(fresh.keys.test.publishable, wallet(), { domain: "localhost:3000", uri: "http://localhost:3000/" });
    expect(local.status, JSON.stringify(local.body)).toBe(200);
    expect((await authenticate(fresh.keys.test.publishable, wallet(), { domain: "wallet.example:8443", uri: "https://wallet.example:8443/play" })).status).toBe(200);
    const evil = expectError(await authenticate(fresh.keys.test.publishable, wallet(), { domain: "evil.example", uri: "https://evil.example/" }), 401, "authentication_error");
    expect(evil.details?.domain).toMatchObject({ value: "evil.example" });

    // Live mode: nothing until configured, and the refusal says how to configure it.
    const live = await call("GET", "/iam/v1/siwe/settings", { key: fresh.keys.live.secret });
    expect(live.body).toMatchObject({ livemode: true, domains: [], allowedDomains: [] });
    const refused = expectError(await authenticate(fresh.keys.live.publishable, wallet(), { domain: "localhost:3000", uri: "http://localhost:3000/", chainId: 31339 }), 401);
    expect(refused.message).toMatch(/live mode/);
    expect(refused.message).toMatch(/\/iam\/v1\/siwe\/settings/);
  });

  it("refuses a message signed for another domain (phishing), naming the domain and what is allowed", async () => {
    expect((await settings(sk, { domains: ["game.example", "*.preview.game.example"] })).status).toBe(200);
    const account = wallet();
    const phished = await authenticate(pk, account, { domain: "evil.example", uri: "https://evil.example/login", chainId: 31337 });
    const error = expectError(phished, 401, "authentication_error");
    expect(error.message).toMatch(/domain/);
    expect(error.message).toContain("evil.example");
    expect(error.message).toContain("game.example");
    expect(error.details?.domain).toMatchObject({ value: "evil.example" });
    // A configured host without a port allows it on any port; a wildcard its subdomains, not lookalikes.
    expect((await authenticate(pk, wallet(), { domain: "game.example:8443", uri: "https://game.example:8443/" })).status).toBe(200);
    expect((await authenticate(pk, wallet(), { domain: "pr-7.preview.game.example", uri: "https://pr-7.preview.game.example/" })).status).toBe(200);
    expectError(await authenticate(pk, wallet(), { domain: "game.example.evil.example", uri: "https://game.example.evil.example/" }), 401);
    expectError(await authenticate(pk, wallet(), { domain: "evilgame.example", uri: "https://evilgame.example/" }), 401);
    // The refused wallet got no player; the genuine domain signs it up.
    expect((await authenticate(pk, account)).status).toBe(200);
  });

  it("refuses a URI off the allowed domains, or outside the configured URIs", async () => {
    expect((await settings(sk, { domains: ["game.example"], uris: [] })).status).toBe(200);
    const offDomain = expectError(await authenticate(pk, wallet(), { uri: "https://evil.example/login" }), 401);
    expect(offDomain.details?.uri).toMatchObject({ value: "https://evil.example/login" });
    expect(offDomain.message).toMatch(/URI/);

    const set = await settings(sk, { uris: ["https://game.example/login", "mygame://auth"] });
    expect(set.status, JSON.stringify(set.body)).toBe(200);
    expect(set.body).toMatchObject({ domains: ["game.example"], uris: ["https://game.example/login", "mygame://auth"] });
    expect((await authenticate(pk, wallet(), { uri: "https://game.example/login" })).status).toBe(200);
    expect((await authenticate(pk, wallet(), { uri: "https://game.example/login/step?x=1" })).status).toBe(200);
    expect((await authenticate(pk, wallet(), { uri: "mygame://auth" })).status).toBe(200);
    for (const uri of ["https://game.example/other", "https://game.example/loginx", "https://game.example@evil.example/login"]) {
      const error = expectError(await authenticate(pk, wallet(), { uri }), 401);
      expect(error.details?.uri, uri).toMatchObject({ value: uri });
      expect(error.message).toContain("https://game.example/login");
    }
    expect((await settings(sk, { uris: [] })).body.uris).toEqual([]);
  });

  it("refuses a chain the mode cannot use, and honours issuedAt, expirationTime and notBefore", async () => {
    await settings(sk, { domains: ["game.example"] });
    const mainnet = expectError(await authenticate(pk, wallet(), { chainId: 1 }), 401);
    expect(mainnet.details?.chainId).toMatchObject({ value: 1 });
    const liveChain = expectError(await authenticate(pk, wallet(), { chainId: 31339 }), 401);
    expect(liveChain.message).toMatch(/live chain/);
    expect((await authenticate(pk, wallet(), { chainId: 31338 })).status).toBe(200);

    expect(expectError(await authenticate(pk, wallet(), { issuedAt: new Date(Date.now() + 3_600_000) }), 401).details?.issuedAt).toBeDefined();
    expect(expectError(await authenticate(pk, wallet(), { expirationTime: new Date(Date.now() - 1000) }), 401).message).toMatch(/expirationTime/);
    expect(expectError(await authenticate(pk, wallet(), { notBefore: new Date(Date.now() + 3_600_000) }), 401).message).toMatch(/notBefore/);
  });

  it("checks a linked wallet's message the same way", async () => {
    await settings(sk, { domains: ["game.example"] });
    const signedIn = (await authenticate(pk, wallet())).body;
    const second = wallet();
    const link = async (fields: Parameters<typeof messageFor>[2]) => {
      const message = messageFor(second.address, await nonceFor(signedIn.token, second.address, "/iam/v1/siwe/init/link"), fields);
      return call("POST", "/iam/v1/siwe/link", { key: signedIn.token, json: { message, signature: await second.signMessage({ message }) } });
    };
    expect(expectError(await link({ domain: "evil.example", uri: "https://evil.example/" }), 401).details?.domain).toMatchObject({ value: "evil.example" });
    expect(expectError(await link({ uri: "https://evil.example/" }), 401).details?.uri).toBeDefined();
    expect(expectError(await link({ chainId: 1 }), 401).details?.chainId).toBeDefined();
    const linked = await link({});
    expect(linked.status, JSON.stringify(linked.body)).toBe(200);
    expect(linked.body.linkedAccounts).toHaveLength(2);
  });

  it("is configured with the secret key only, validated entry by entry, per mode", async () => {
    expectError(await call("POST", "/iam/v1/siwe/settings", { key: pk, basic: true, json: { domains: ["evil.example"] } }), 403, "permission_error");
    expectError(await call("GET", "/iam/v1/siwe/settings", { key: pk, basic: true }), 403, "permission_error");
    for (const [field, value] of [
      ["domains", ["https://game.example"]],
      ["domains", ["game.example/login"]],
      ["domains", ["game.example:99999"]],
      ["domains", ["*"]],
      ["uris", ["not a uri"]],
      ["uris", ["https://user@game.example/"]],
      ["uris", ["https://game.example/#x"]],
    ] as const) {
      const error = expectError(await settings(sk, { [field]: value }), 400);
      expect(Object.keys(error.details ?? {}).join(), `${field} ${value}`).toMatch(new RegExp(`^${field}`));
    }
    expectError(await settings(sk, { domains: Array.from({ length: 101 }, (_, i) => `d${i}.example`) }), 400);
    // Form-encoded, with brackets; hosts lower-cased, URIs normalised.
    const form = await call("POST", "/iam/v1/siwe/settings", { key: sk, form: { "domains[0]": "Game.Example", "domains[1]": "localhost:5173", "uris[0]": "HTTPS://Game.Example" } });
    expect(form.status, JSON.stringify(form.body)).toBe(200);
    expect(form.body).toMatchObject({ domains: ["game.example", "localhost:5173"], uris: ["https://game.example/"], allowedDomains: ["game.example", "localhost:5173"] });
    // The live mode's settings are its own.
    expect((await call("GET", "/iam/v1/siwe/settings", { key: project.keys.live.secret })).body.domains).toEqual([]);
    await settings(sk, { domains: ["game.example"], uris: [] });
  });

  it("limits sign-ups (new players) per client address with a 429 and Retry-After; sign-ins of existing players still pass", async () => {
    await settings(sk, { domains: ["game.example"], uris: [] });
    vi.stubEnv("RATE_LIMIT_AUTH_PER_MINUTE", "2");
    await withinOneMinuteWindow();
    const ip = address();
    const known = wallet();
    expect((await authenticate(pk, known, {}, ip)).status).toBe(200);
    expect((await authenticate(pk, wallet(), {}, ip)).status).toBe(200);
    const late = wallet();
    const message = messageFor(late.address, await nonceFor(pk, late.address));
    const body = { message, signature: await late.signMessage({ message }) };
    const refused = await call("POST", "/iam/v1/siwe/authenticate", { key: pk, basic: true, headers: from(ip), json: body });
    expect(expectError(refused, 429, "rate_limit_error").message).toMatch(/sign-ups from your address/);
    expect(Number(refused.headers.get("retry-after"))).toBeGreaterThan(0);
    // Signing in an existing player is no sign-up; another address is not held back, and the refused message's nonce was kept.
    expect((await authenticate(pk, known, {}, ip)).status).toBe(200);
    const elsewhere = await call("POST", "/iam/v1/siwe/authenticate", { key: pk, basic: true, headers: from(), json: body });
    expect(elsewhere.status, JSON.stringify(elsewhere.body)).toBe(200);
  });
});
