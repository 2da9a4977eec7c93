import { afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { getDb } from "@/lib/db/client";
import { rollKeys, type ProjectWithKeys } from "@/lib/projects/service";
import { PLAYER_TOKEN_TTL_SECONDS } from "@/lib/iam/tokens";
import { call, expectError, newProject } from "./helpers/api";
import { logIn, newEmail, signedUp } from "./helpers/credentials-fixtures";

let project: ProjectWithKeys;
beforeAll(async () => {
  project = await newProject();
});
afterEach(() => {
  vi.unstubAllEnvs();
});

describe("authentication", () => {
  it("accepts a secret key as a Bearer token and as the HTTP Basic user name", async () => {
    expect((await call("GET", "/v1/players", { key: project.keys.test.secret })).status).toBe(200);
    expect((await call("GET", "/v1/players", { key: project.keys.test.secret, basic: true })).status).toBe(200);
    const noColon = await call("GET", "/v1/players", {
      headers: { authorization: `Basic ${Buffer.from(project.keys.test.secret).toString("base64")}` },
    });
    expect(noColon.status).toBe(200);
  });

  it("answers 401 with a reason when the key is missing, malformed or unknown", async () => {
    const missing = await call("GET", "/v1/players");
    expect(expectError(missing, 401, "authentication_error").message).toMatch(/did not provide an API key/);
    expect(missing.headers.get("www-authenticate")).toMatch(/Bearer/);
    expectError(await call("GET", "/v1/players", { headers: { authorization: "Token abc" } }), 401, "authentication_error");
    expectError(await call("GET", "/v1/players", { headers: { authorization: "Bearer" } }), 401, "authentication_error");
    const wrong = expectError(await call("GET", "/v1/players", { key: "sk_test_00000000-0000-0000-0000-000000000000" }), 401);
    expect(wrong.message).toContain("sk_test_…0000");
    expect(wrong.message).not.toContain("sk_test_00000000-0000");
  });

  it("refuses publishable keys on secret-key endpoints with 403", async () => {
    for (const [method, path] of [
      ["GET", "/v1/players"],
      ["POST", "/v1/players"],
      ["GET", "/v1/contracts"],
    ] as const) {
      expectError(await call(method, path, { key: project.keys.test.publishable, form: method === "POST" ? { name: "x" } : undefined }), 403, "permission_error");
    }
  });

  it("stops a rolled key at once and accepts the new one", async () => {
    const own = await newProject();
    const before = own.keys.test.secret;
    // In use (so cached by this process) right before the roll.
    expect((await call("GET", "/v1/players", { key: before })).status).toBe(200);
    const rolled = await rollKeys(await getDb(), own.id, "test");
    expect(rolled?.secret).toMatch(/^sk_test_/);
    expect(expectError(await call("GET", "/v1/players", { key: before }), 401).message).toMatch(/rolled/);
    expect((await call("GET", "/v1/players", { key: rolled!.secret })).status).toBe(200);
    // the live keys were not touched
    expect((await call("GET", "/v1/players", { key: own.keys.live.secret })).status).toBe(200);
  });

  it("stores no usable key: secrets are hashed for lookup and encrypted at rest", async () => {
    const db = await getDb();
    const { apiKeys } = await import("@/lib/db/schema");
    const { eq } = await import("drizzle-orm");
    const rows = await db.select().from(apiKeys).where(eq(apiKeys.projectId, project.id));
    const dump = JSON.stringify(rows);
    expect(dump).not.toContain(project.keys.test.secret);
    expect(dump).not.toContain(project.keys.live.secret);
    expect(dump).toContain(project.keys.test.publishable);
    const { openSecretKey } = await import("@/lib/projects/sealed-keys");
    const secretRow = rows.find((r) => r.kind === "secret" && !r.livemode)!;
    expect(openSecretKey(secretRow.encryptedSecret!, secretRow)).toBe(project.keys.test.secret);
    expect(() => openSecretKey(secretRow.encryptedSecret!, { ...secretRow, projectId: "another project" })).toThrow();
  });

  it("refuses plain HTTP in production when not bound to loopback", async () => {
    vi.stubEnv("NODE_ENV", "production");
    vi.stubEnv("HOST", "0.0.0.0");
    const plain = await call("GET", "/v1/players", { key: project.keys.test.secret });
    expect(expectError(plain, 403).message).toMatch(/HTTPS.*set TRUST_PROXY/);
    vi.stubEnv("TRUST_PROXY", "1");
    expect(expectError(await call("GET", "/v1/players", { key: project.keys.test.secret }), 403).message).not.toMatch(/TRUST_PROXY/);
    const proxied = await call("GET", "/v1/players", { key: project.keys.test.secret, headers: { "x-forwarded-proto": "https" } });
    expect(proxied.status).toBe(200);
    vi.stubEnv("HOST", "127.0.0.1");
    expect((await call("GET", "/v1/players", { key: project.keys.test.secret })).status).toBe(200);
  });
});

describe("every 401 says how to authenticate (WWW-Authenticate, RFC 9110)", () => {
  const challenged = (res: { status: number; headers: Headers; body?: unknown }, scheme: string) => {
    expect(res.status, JSON.stringify(res.body)).toBe(401);
    expect(res.headers.get("www-authenticate")).toMatch(new RegExp(`^${scheme} realm="[a-z]+"`));
  };

  it("API keys: missing, malformed, unknown or rolled, on the REST API, the bundler RPC and the paymaster service", async () => {
    challenged(await call("GET", "/v1/players"), "Bearer");
    challenged(await call("GET", "/v1/players", { headers: { authorization: "Token abc" } }), "Bearer");
    challenged(await call("GET", "/v1/players", { key: "sk_test_00000000-0000-0000-0000-000000000000", basic: true }), "Bearer");
    const own = await newProject();
    await rollKeys(await getDb(), own.id, "test");
    challenged(await call("GET", "/v1/players", { key: own.keys.test.secret }), "Bearer");
    const rpc = { json: { jsonrpc: "2.0", id: 1, method: "eth_chainId", params: [] } };
    challenged(await call("POST", "/rpc/31337", rpc), "Bearer");
    challenged(await call("POST", "/rpc/31337", { ...rpc, key: project.keys.test.secret }), "Bearer");
    challenged(await call("POST", "/v1/paymaster_service/pk_test_nothing", rpc), "Bearer");
  });

  it("players: no token, a made-up, expired or other project's token, a wrong password, a bad refresh token", async () => {
    const pk = project.keys.test.publishable;
    challenged(await call("GET", "/iam/v1/me"), "Bearer");
    challenged(await call("GET", "/iam/v1/me", { key: "not.a.token" }), "Bearer");
    const { token } = await signedUp(pk);
    expect((await call("GET", "/iam/v1/me", { key: token })).status).toBe(200);
    challenged(await call("GET", "/iam/v1/me", { key: token, headers: { "x-project-key": (await newProject()).keys.test.publishable } }), "Bearer");
    vi.useFakeTimers({ toFake: ["Date"], now: Date.now() + (PLAYER_TOKEN_TTL_SECONDS + 60) * 1000 });
    try {
      challenged(await call("GET", "/iam/v1/me", { key: token }), "Bearer");
    } finally {
      vi.useRealTimers();
    }
    challenged(await logIn(pk, newEmail(), "wrong password"), "Bearer");
    challenged(await call("POST", "/iam/v1/sessions", { key: pk, basic: true, json: { refreshToken: "nope" } }), "Bearer");
  });

  it("a signing link's token names its own scheme (the dashboard's, in gas-report.test.ts)", async () => {
    const { GET: signingStatus } = await import("@/app/sign/[id]/status/route");
    const link = await signingStatus(new Request("http://127.0.0.1:3000/sign/tin_nothing/status?t=garbage"), { params: Promise.resolve({ id: "tin_nothing" }) });
    challenged(link, "SigningLink");
  });
});

describe("rate limiting", () => {
  it("answers 429 with Retry-After once a project's mode exceeds its rate, and the other mode is unaffected", async () => {
    vi.stubEnv("RATE_LIMIT_PER_SECOND", "5");
    const own = await newProject();
    const results = await Promise.all(Array.from({ length: 25 }, () => call("GET", "/v1/players", { key: own.keys.test.secret })));
    const limited = results.filter((r) => r.status === 429);
    // A one-second window each; a burst may straddle two of them.
    const ok = results.filter((r) => r.status === 200).length;
    expect(ok).toBeGreaterThanOrEqual(5);
    expect(ok).toBeLessThanOrEqual(10);
    expect(limited.length).toBeGreaterThan(0);
    expectError(limited[0]!, 429, "rate_limit_error");
    expect(Number(limited[0]!.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
    expect((await call("GET", "/v1/players", { key: own.keys.live.secret })).status).toBe(200);
  });
});

describe("routing", () => {
  it("answers unknown paths with a JSON 404 and wrong methods with a JSON 405", async () => {
    expectError(await call("GET", "/v1/wallets", { key: project.keys.test.secret }), 404);
    expectError(await call("POST", "/v1/players/x/y/z", { key: project.keys.test.secret }), 404);
    const res = await call("PUT", "/v1/players", { key: project.keys.test.secret });
    expectError(res, 405);
    expect(res.headers.get("allow")).toBe("GET, POST");
  });

  it("answers every response with a request id", async () => {
    const res = await call("GET", "/v1/players", { key: project.keys.test.secret });
    expect(res.headers.get("x-request-id")).toMatch(/^req_/);
  });
});
