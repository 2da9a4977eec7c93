import { and, eq, sql } from "drizzle-orm";
import { beforeAll, describe, expect, it } from "vitest";
import { getDb } from "@/lib/db/client";
import { idempotencyKeys } from "@/lib/db/schema";
import { credentialOf, requestHash } from "@/lib/http/idempotency";
import { findKey, type ProjectWithKeys } from "@/lib/projects/service";
import { call, expectError, newProject } from "./helpers/api";
import { from, newEmail, PASSWORD, signedUp } from "./helpers/credentials-fixtures";

let project: ProjectWithKeys;
let key: string;
beforeAll(async () => {
  project = await newProject();
  key = project.keys.test.secret;
});

const playersNamed = async (name: string) =>
  (await call("GET", "/v1/players", { key, query: { name, limit: 100 } })).body.data as { id: string }[];

describe("Idempotency-Key", () => {
  it("replays the first response for the same key and body, in either encoding", async () => {
    const headers = { "idempotency-key": "k-replay" };
    const first = await call("POST", "/v1/players", { key, form: { name: "once" }, headers });
    const second = await call("POST", "/v1/players", { key, json: { name: "once" }, headers });
    expect(second.status).toBe(200);
    expect(second.body).toEqual(first.body);
    expect(second.headers.get("idempotent-replayed")).toBe("true");
    expect(first.headers.get("idempotent-replayed")).toBeNull();
    expect(await playersNamed("once")).toHaveLength(1);
  });

  it("refuses the same key with a different body or on another endpoint with 409", async () => {
    const headers = { "idempotency-key": "k-mismatch" };
    await call("POST", "/v1/players", { key, form: { name: "a" }, headers });
    expectError(await call("POST", "/v1/players", { key, form: { name: "b" }, headers }), 409, "idempotency_error");
    expectError(
      await call("POST", "/v1/contracts", { key, form: { name: "a", chainId: 31337, address: "0x5FbDB2315678afecb367f032d93F642f64180aa3" }, headers }),
      409,
      "idempotency_error",
    );
    expect(await playersNamed("b")).toHaveLength(0);
  });

  it("runs concurrent duplicates exactly once", async () => {
    const headers = { "idempotency-key": "k-concurrent" };
    const results = await Promise.all(Array.from({ length: 20 }, () => call("POST", "/v1/players", { key, form: { name: "concurrent" }, headers })));
    const ok = results.filter((r) => r.status === 200);
    const busy = results.filter((r) => r.status === 409);
    expect(ok.length + busy.length).toBe(20);
    expect(new Set(ok.map((r) => r.body.id)).size).toBe(1);
    for (const r of busy) expectError(r, 409, "idempotency_error");
    expect(await playersNamed("concurrent")).toHaveLength(1);
  });

  it("does not keep validation failures, so the corrected request runs", async () => {
    const headers = { "idempotency-key": "k-invalid-first" };
    expectError(await call("POST", "/v1/players", { key, json: { name: 5 }, headers }), 400);
    const fixed = await call("POST", "/v1/players", { key, json: { name: "fixed" }, headers });
    expect(fixed.status).toBe(200);
  });

  it("replays a client error the operation itself produced", async () => {
    const headers = { "idempotency-key": "k-conflict" };
    const first = await call("POST", "/v1/players/pla_missing", { key, form: { name: "renamed" }, headers });
    expectError(first, 404);
    const again = await call("POST", "/v1/players/pla_missing", { key, form: { name: "renamed" }, headers });
    expect(again.status).toBe(404);
    expect(again.body).toEqual(first.body);
    expect(again.headers.get("idempotent-replayed")).toBe("true");
  });

  it("scopes keys to the project and mode", async () => {
    const other = await newProject();
    const headers = { "idempotency-key": "k-shared" };
    const mine = await call("POST", "/v1/players", { key, form: { name: "scoped" }, headers });
    const theirs = await call("POST", "/v1/players", { key: other.keys.test.secret, form: { name: "scoped" }, headers });
    const live = await call("POST", "/v1/players", { key: project.keys.live.secret, form: { name: "scoped" }, headers });
    expect(new Set([mine.body.id, theirs.body.id, live.body.id]).size).toBe(3);
  });

  it("forgets a key after 24 hours", async () => {
    const headers = { "idempotency-key": "k-expiring" };
    const first = await call("POST", "/v1/players", { key, form: { name: "day one" }, headers });
    const db = await getDb();
    await db
      .update(idempotencyKeys)
      .set({ createdAt: sql`now() - interval '25 hours'` })
      .where(and(eq(idempotencyKeys.projectId, project.id), eq(idempotencyKeys.key, "k-expiring")));
    const later = await call("POST", "/v1/players", { key, form: { name: "day two" }, headers });
    expect(later.status).toBe(200);
    expect(later.body.id).not.toBe(first.body.id);
  });

  it("refuses keys longer than 255 characters", async () => {
    expectError(await call("POST", "/v1/players", { key, form: { name: "x" }, headers: { "idempotency-key": "k".repeat(256) } }), 400);
  });
});

describe("Idempotency-Key after a crash", () => {
  it("lets a retry take over a claim not renewed for a lease (30 s), not a fresh one", async () => {
    const project = await newProject();
    const key = project.keys.test.secret;
    const db = await getDb();
    const credential = credentialOf({ kind: "key", key: await findKey(db, key) });
    const claim = (age: string, k: string) =>
      db.insert(idempotencyKeys).values({ projectId: project.id, livemode: false, credential, key: k, requestHash: requestHash("POST", "/v1/players", { name: "retried" }), createdAt: sql`now() - ${sql.raw(`interval '${age}'`)}` });
    await claim("31 seconds", "k-abandoned");
    await claim("5 seconds", "k-running");
    expect((await call("POST", "/v1/players", { key, form: { name: "retried" }, headers: { "idempotency-key": "k-abandoned" } })).status).toBe(200);
    const running = await call("POST", "/v1/players", { key, form: { name: "retried" }, headers: { "idempotency-key": "k-running" } });
    expect(expectError(running, 409, "idempotency_error").message).toMatch(/still being processed/);
  });
});

describe("Idempotency-Key scoped by credential, answers sealed", () => {
  it("a publishable-key caller cannot squat the backend's key: the same key with the secret key is another request", async () => {
    const p = await newProject();
    const headers = { "idempotency-key": "k-squatted", ...from() };
    const squat = await call("POST", "/iam/v1/auth/signup", { key: p.keys.test.publishable, basic: true, headers, json: { email: newEmail(), password: PASSWORD, name: "Squatter" } });
    expect(squat.status, JSON.stringify(squat.body)).toBe(200);
    const backend = await call("POST", "/v1/players", { key: p.keys.test.secret, json: { name: "backend's" }, headers });
    expect(backend.status, JSON.stringify(backend.body)).toBe(200);
    expect(backend.headers.get("idempotent-replayed")).toBeNull();
  });

  it("the same key and body with the publishable key and with the secret key give independent answers", async () => {
    const p = await newProject();
    const { email } = await signedUp(p.keys.test.publishable);
    const headers = { "idempotency-key": "k-two-callers", ...from() };
    const login = (k: string) => call("POST", "/iam/v1/auth/login", { key: k, basic: true, headers, json: { email, password: PASSWORD } });
    const publicly = await login(p.keys.test.publishable);
    const backend = await login(p.keys.test.secret);
    expect(publicly.status, JSON.stringify(publicly.body)).toBe(200);
    expect(backend.status, JSON.stringify(backend.body)).toBe(200);
    expect(backend.headers.get("idempotent-replayed")).toBeNull();
    expect(backend.body.token).not.toBe(publicly.body.token);
    // Each caller still replays its own.
    const again = await login(p.keys.test.publishable);
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    expect(again.body.token).toBe(publicly.body.token);
  });

  it("player B cannot replay player A's answer: B's request runs", async () => {
    const p = await newProject();
    const a = await signedUp(p.keys.test.publishable);
    const b = await signedUp(p.keys.test.publishable);
    const headers = { "idempotency-key": "k-logout" };
    const logout = (token: string) => call("POST", "/iam/v1/sessions/logout", { key: token, headers, json: {} });
    expect((await logout(a.token)).status).toBe(200);
    const mine = await logout(b.token);
    expect(mine.status, JSON.stringify(mine.body)).toBe(200);
    expect(mine.headers.get("idempotent-replayed")).toBeNull();
    expectError(await call("GET", "/iam/v1/me", { key: b.token }), 401); // B's own session ended
  });

  it("keeps an answer that carries a token sealed in the database, and replays it", async () => {
    const p = await newProject();
    const { email } = await signedUp(p.keys.test.publishable);
    const headers = { "idempotency-key": "k-reset-token" };
    const first = await call("POST", "/iam/v1/password/reset/request", { key: p.keys.test.secret, form: { email }, headers });
    expect(first.status, JSON.stringify(first.body)).toBe(200);
    expect(first.body.token).toMatch(/^pwr_/);
    const rows = await (await getDb()).select().from(idempotencyKeys).where(eq(idempotencyKeys.projectId, p.id));
    expect(rows).toHaveLength(1);
    expect(JSON.stringify(rows)).not.toContain(first.body.token);
    expect(JSON.stringify(rows)).not.toContain(email.toLowerCase());
    const again = await call("POST", "/iam/v1/password/reset/request", { key: p.keys.test.secret, form: { email }, headers });
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    expect(again.body).toEqual(first.body);
  });
});
