import crypto from "node:crypto";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { drizzle } from "drizzle-orm/postgres-js";
import { eq, like } from "drizzle-orm";
import postgres from "postgres";
import { afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { getDb, type Db } from "@/lib/db/client";
import * as schema from "@/lib/db/schema";
import { rateLimitCounters } from "@/lib/db/schema";
import { clientAddress } from "@/lib/http/client-address";
import { installRequestHooks } from "@/lib/http/node-server";
import { requestOrigin } from "@/lib/http/origin";
import { hit, takeToken } from "@/lib/http/rate-limit";
import { siweAuthenticateOperation, siweInitOperation, siweLinkOperation } from "@/lib/iam/siwe-operations";
import { createIntent } from "@/lib/intents/operations";
import { readContract } from "@/lib/contracts/operations";
import { paymasterServiceRpc } from "@/lib/paymaster-service/rpc-operation";
import { listPlayers } from "@/lib/players/operations";
import { createSecretKey } from "@/lib/projects/service";
import { call, expectError, newProject } from "./helpers/api";

const bucket = () => `test:${crypto.randomUUID()}`;
const ip = () => `203.0.113.${crypto.randomInt(1, 255)}-${crypto.randomUUID().slice(0, 8)}`;

beforeAll(async () => {
  await getDb();
});

afterEach(() => {
  vi.unstubAllEnvs();
});

describe("the shared limiter", () => {
  it("counts in the database: a window's hits, a new window starting from one", async () => {
    const db = await getDb();
    const key = bucket();
    const limit = { max: 3, windowMs: 1000 };
    const now = 1_700_000_000_000;
    const results = await Promise.all(Array.from({ length: 5 }, () => hit(db, key, limit, now)));
    expect(results.map((r) => r.allowed).sort()).toEqual([false, false, true, true, true]);
    expect(results.map((r) => r.hits).sort()).toEqual([1, 2, 3, 4, 5]);
    const [row] = await db.select().from(rateLimitCounters).where(eq(rateLimitCounters.bucket, key));
    expect(row).toMatchObject({ windowStart: now, expiresAt: now + 1000, hits: 5 });
    expect(await hit(db, key, limit, now + 1000)).toMatchObject({ allowed: true, hits: 1 });
    expect(await hit(db, key, { max: 0, windowMs: 1000 }, now)).toMatchObject({ allowed: true });
  });

  it("holds across instances: two database clients count into one bucket", async () => {
    const db = await getDb();
    const key = bucket();
    const limit = { max: 4, windowMs: 60_000 };
    const now = Date.now();
    // A second instance: its own connection pool to the same PostgreSQL. (PGlite is one process's
    // database by design, so there the test shows the count is the database's, not the process's.)
    const other = process.env.DATABASE_URL ? postgres(process.env.DATABASE_URL, { max: 2, onnotice: () => {} }) : null;
    const second = other ? (drizzle(other, { schema, casing: "snake_case" }) as unknown as Db) : db;
    try {
      const results = await Promise.all([hit(db, key, limit, now), hit(second, key, limit, now), hit(db, key, limit, now), hit(second, key, limit, now), hit(second, key, limit, now)]);
      expect(results.filter((r) => r.allowed)).toHaveLength(4);
      const [row] = await second.select({ hits: rateLimitCounters.hits }).from(rateLimitCounters).where(eq(rateLimitCounters.bucket, key));
      expect(row!.hits).toBe(5);
    } finally {
      await other?.end();
    }
  });

  it("deletes counters whose window has ended", async () => {
    const db = await getDb();
    const key = bucket();
    await hit(db, key, { max: 10, windowMs: 1000 }, 1_000_000);
    (globalThis as unknown as { __rateLimitCleanup: { at: number } }).__rateLimitCleanup.at = 0;
    await hit(db, bucket(), { max: 10, windowMs: 1000 });
    await vi.waitFor(async () => expect(await db.select().from(rateLimitCounters).where(eq(rateLimitCounters.bucket, key))).toEqual([]));
  });
});

describe("API limits", () => {
  it("two keys of one project share one allowance (more keys buy no more requests)", async () => {
    vi.stubEnv("RATE_LIMIT_PER_SECOND", "5");
    const db = await getDb();
    const project = await newProject();
    const extra = await createSecretKey(db, { projectId: project.id, livemode: false });
    const results = await Promise.all(
      Array.from({ length: 24 }, (_, i) => call("GET", "/v1/players", { key: i % 2 ? extra : project.keys.test.secret })),
    );
    // A burst may straddle two one-second windows: at most 2 × 5 get through, whichever key.
    const ok = results.filter((r) => r.status === 200).length;
    expect(ok).toBeGreaterThanOrEqual(5);
    expect(ok).toBeLessThanOrEqual(10);
    const limited = results.find((r) => r.status === 429)!;
    expect(expectError(limited, 429, "rate_limit_error").message).toMatch(/this project/);
    expect(Number(limited.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
    // The other mode and other projects have allowances of their own.
    expect((await call("GET", "/v1/players", { key: project.keys.live.secret })).status).toBe(200);
    expect((await call("GET", "/v1/players", { key: (await newProject()).keys.test.secret })).status).toBe(200);
  });

  it("chain work (intents, contract reads) has a smaller share of its own per project", async () => {
    vi.stubEnv("RATE_LIMIT_PER_SECOND", "100");
    vi.stubEnv("RATE_LIMIT_EXPENSIVE_PER_SECOND", "2");
    const db = await getDb();
    const project = { projectId: `pro_${crypto.randomUUID()}`, livemode: false };
    const now = 1_800_000_000_000;
    // 2/s over a 10 s window: a burst of 20, then refused
    for (let i = 0; i < 10; i++) {
      await takeToken(db, project, createIntent, now);
      await takeToken(db, project, readContract, now);
    }
    await expect(takeToken(db, project, createIntent, now)).rejects.toMatchObject({ status: 429, type: "rate_limit_error" });
    // Other operations still pass: the share caps chain work only.
    await takeToken(db, project, listPlayers, now);
    await takeToken(db, { ...project, projectId: `pro_${crypto.randomUUID()}` }, createIntent, now);
    vi.stubEnv("RATE_LIMIT_PER_SECOND", "0");
    await takeToken(db, project, createIntent, now); // 0 turns the API's limits off
  });
});

describe("unauthenticated routes, per client address", () => {
  it("limits the signing routes per address, whatever link is used", async () => {
    vi.stubEnv("RATE_LIMIT_PUBLIC_PER_MINUTE", "3");
    const { GET } = await import("@/app/sign/[id]/status/route");
    const from = ip();
    const ask = (address: string) =>
      GET(new Request(`http://127.0.0.1:3000/sign/tin_${crypto.randomUUID()}/status?t=bad`, { headers: { "x-forwarded-for": address } }), {
        params: Promise.resolve({ id: `tin_${crypto.randomUUID()}` }),
      });
    const statuses = [];
    for (let i = 0; i < 4; i++) statuses.push((await ask(from)).status);
    expect(statuses.slice(0, 3).every((s) => s !== 429)).toBe(true);
    expect(statuses[3]).toBe(429);
    expect((await ask(ip())).status).not.toBe(429);
  });

  it("limits API requests with invalid credentials per address, and never the valid keys from it", async () => {
    vi.stubEnv("RATE_LIMIT_PUBLIC_PER_MINUTE", "3");
    const from = ip();
    const headers = { "x-forwarded-for": from };
    const statuses = [];
    for (let i = 0; i < 5; i++) statuses.push((await call("GET", "/v1/players", { key: `sk_test_${crypto.randomUUID()}`, headers })).status);
    expect(statuses).toEqual([401, 401, 401, 429, 429]);
    expect((await call("GET", "/v1/players", { key: null, headers: { "x-forwarded-for": ip() } })).status).toBe(401);
    const project = await newProject();
    expect((await call("GET", "/v1/players", { key: project.keys.test.secret, headers })).status).toBe(200);
  });

  it("takes the address from the socket, or from X-Forwarded-For's trusted end with TRUST_PROXY", () => {
    expect(clientAddress(new Headers({ "x-forwarded-for": "10.0.0.1" }))).toBe("10.0.0.1");
    expect(clientAddress({ "x-forwarded-for": "1.1.1.1, 10.0.0.1" })).toBe("10.0.0.1");
    vi.stubEnv("TRUST_PROXY", "2");
    expect(clientAddress(new Headers({ "x-forwarded-for": "forged, 198.51.100.7, 10.0.0.2" }))).toBe("198.51.100.7");
    expect(clientAddress(undefined)).toBe("unknown");
  });

  it("drops a client's own X-Forwarded-For on arrival unless TRUST_PROXY is set", async () => {
    installRequestHooks();
    const seen: (string | undefined)[] = [];
    const server = http.createServer((req, res) => {
      seen.push(req.headers["x-forwarded-for"] as string | undefined);
      res.end();
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
    try {
      await fetch(url, { headers: { "x-forwarded-for": "6.6.6.6" } });
      vi.stubEnv("TRUST_PROXY", "1");
      await fetch(url, { headers: { "x-forwarded-for": "7.7.7.7" } });
    } finally {
      server.close();
    }
    expect(seen).toEqual([undefined, "7.7.7.7"]);
  });
});

describe("public credentials, a budget of their own", () => {
  const wallet = "0x000000000000000000000000000000000000dEaD";
  const siweInit = (key: string, from: string) => call("POST", "/iam/v1/siwe/init", { key, basic: true, json: { address: wallet }, headers: { "x-forwarded-for": from } });

  it("a flood with the publishable key answers 429 to the public only: the secret key still gets 200s", async () => {
    vi.stubEnv("RATE_LIMIT_PER_SECOND", "5");
    vi.stubEnv("RATE_LIMIT_PUBLIC_API_PER_SECOND", "5");
    const project = await newProject();
    // From many addresses, as a botnet would: only the project's public budget stops it.
    const flood = [];
    for (let i = 0; i < 15; i++) flood.push(await siweInit(project.keys.test.publishable, `198.51.100.${i + 1}`));
    const limited = flood.find((r) => r.status === 429);
    expect(limited, "the flood was never limited").toBeDefined();
    expect(expectError(limited!, 429, "rate_limit_error").message).toMatch(/public credentials/);
    for (let i = 0; i < 3; i++) expect((await call("GET", "/v1/players", { key: project.keys.test.secret })).status).toBe(200);
  });

  it("gives each client address its own share of the project's public budget", async () => {
    vi.stubEnv("RATE_LIMIT_PUBLIC_API_PER_ADDRESS_PER_MINUTE", "3");
    const project = await newProject();
    const pk = project.keys.test.publishable;
    const statuses = [];
    for (let i = 0; i < 4; i++) statuses.push((await siweInit(pk, "2001:db8:aa:1::1")).status);
    expect(statuses.slice(0, 3).every((s) => s !== 429)).toBe(true);
    expect(statuses[3]).toBe(429);
    expect(expectError(await siweInit(pk, "2001:db8:aa:1::2"), 429, "rate_limit_error").message).toMatch(/your address/); // same /64
    expect((await siweInit(pk, "2001:db8:aa:2::1")).status).not.toBe(429);
    expect((await siweInit(pk, "198.51.100.200")).status).not.toBe(429);
    // The secret key is no client address's.
    for (let i = 0; i < 4; i++) expect((await call("GET", "/v1/players", { key: project.keys.test.secret, headers: { "x-forwarded-for": "2001:db8:aa:1::1" } })).status).toBe(200);
  });

  it("counts identity routes that read a chain in a chain share of the public budget, not the secret key's", async () => {
    vi.stubEnv("RATE_LIMIT_PUBLIC_API_EXPENSIVE_PER_SECOND", "1");
    vi.stubEnv("RATE_LIMIT_EXPENSIVE_PER_SECOND", "1");
    const db = await getDb();
    const project = { projectId: `pro_${crypto.randomUUID()}`, livemode: false };
    const now = 1_900_000_000_000;
    const from = (i: number) => ({ budget: "public" as const, address: `198.51.100.${i}` });
    // 1/s over a 10 s window: a burst of 10, then refused
    for (let i = 0; i < 10; i++) await takeToken(db, project, i % 2 ? siweAuthenticateOperation : siweLinkOperation, now, from(i));
    await expect(takeToken(db, project, siweAuthenticateOperation, now, from(20))).rejects.toMatchObject({ status: 429, type: "rate_limit_error" });
    await expect(takeToken(db, project, paymasterServiceRpc, now, from(21))).rejects.toMatchObject({ status: 429 });
    await takeToken(db, project, siweInitOperation, now, from(22)); // no chain work: not in the share
    // The secret key's chain share is its own.
    for (let i = 0; i < 10; i++) await takeToken(db, project, createIntent, now);
  });
});

describe("client addresses", () => {
  const key = (address: string) => clientAddress(new Headers({ "x-forwarded-for": address }));

  it("groups IPv6 by /64 and reads IPv4-mapped IPv6 as its IPv4", () => {
    expect(key("2001:db8:1:2::a")).toBe(key("2001:db8:1:2:ffff:ffff:ffff:ffff"));
    expect(key("2001:DB8:1:2:0:0:0:A")).toBe(key("2001:db8:1:2::a"));
    expect(key("2001:db8:1:2::a")).not.toBe(key("2001:db8:1:3::a"));
    expect(key("::ffff:198.51.100.7")).toBe("198.51.100.7");
    expect(key("198.51.100.7")).not.toBe(key("198.51.100.8"));
  });

  it("limits two addresses of one /64 as one", async () => {
    vi.stubEnv("RATE_LIMIT_PUBLIC_PER_MINUTE", "3");
    const { GET } = await import("@/app/sign/[id]/status/route");
    const [a, b] = [crypto.randomInt(1, 0xffff).toString(16), crypto.randomInt(1, 0xfffe)];
    const prefix = `2001:db8:${a}:${b.toString(16)}`;
    const ask = (address: string) =>
      GET(new Request(`http://127.0.0.1:3000/sign/tin_x/status?t=bad`, { headers: { "x-forwarded-for": address } }), { params: Promise.resolve({ id: "tin_x" }) });
    const statuses = [];
    for (let i = 0; i < 4; i++) statuses.push((await ask(`${prefix}::${i + 1}`)).status);
    expect(statuses.slice(0, 3).every((s) => s !== 429)).toBe(true);
    expect(statuses[3]).toBe(429);
    expect((await ask(`2001:db8:${a}:${(b + 1).toString(16)}::1`)).status).not.toBe(429);
  });

  it("believes X-Forwarded-Host and -Proto only from a trusted proxy", () => {
    const headers = new Headers({ host: "127.0.0.1:3000", "x-forwarded-host": "evil.example", "x-forwarded-proto": "https" });
    expect(requestOrigin(headers, "http://127.0.0.1:3000/v1/x")).toBe("http://127.0.0.1:3000");
    expect(requestOrigin(new Headers({ "x-forwarded-host": "evil.example" }), "http://localhost:3000/v1/x")).toBe("http://localhost:3000");
    vi.stubEnv("TRUST_PROXY", "1");
    expect(requestOrigin(headers, "http://127.0.0.1:3000/v1/x")).toBe("https://evil.example");
  });

  it("drops a client's own X-Forwarded-Host and -Proto on arrival unless TRUST_PROXY is set", async () => {
    installRequestHooks();
    const seen: (string | undefined)[][] = [];
    const server = http.createServer((req, res) => {
      seen.push([req.headers["x-forwarded-host"] as string | undefined, req.headers["x-forwarded-proto"] as string | undefined]);
      res.end();
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
    const forged = { "x-forwarded-host": "evil.example", "x-forwarded-proto": "https" };
    try {
      await fetch(url, { headers: forged });
      vi.stubEnv("TRUST_PROXY", "1");
      await fetch(url, { headers: forged });
    } finally {
      server.close();
    }
    expect(seen).toEqual([
      [undefined, undefined],
      ["evil.example", "https"],
    ]);
  });
});

describe("counters stay small", () => {
  it("keys buckets by project and mode, not by key", async () => {
    vi.stubEnv("RATE_LIMIT_PER_SECOND", "1000");
    const db = await getDb();
    const project = await newProject();
    const extra = await createSecretKey(db, { projectId: project.id, livemode: false });
    await call("GET", "/v1/players", { key: project.keys.test.secret });
    await call("GET", "/v1/players", { key: extra });
    const rows = await db.select().from(rateLimitCounters).where(like(rateLimitCounters.bucket, `%${project.id}%`));
    expect(rows.map((r) => r.bucket)).toEqual(rows.map(() => `api:${project.id}:test`));
    expect(rows.reduce((sum, r) => sum + r.hits, 0)).toBe(2);
  });
});
