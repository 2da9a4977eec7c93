import { and, eq, sql } from "drizzle-orm";
import { beforeAll, describe, expect, it } from "vitest";
import { getDb } from "@/lib/db/client";
import { idempotencyKeys } from "@/lib/db/schema";
import { requestHash } from "@/lib/http/idempotency";
import type { ProjectWithKeys } from "@/lib/projects/service";
import { call, expectError, newProject } from "./api";

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
  it("lets a retry take over a claim abandoned for more than 5 minutes, not a fresh one", async () => {
    const project = await newProject();
    const key = project.keys.test.secret;
    const db = await getDb();
    const claim = (age: string, k: string) =>
      db.insert(idempotencyKeys).values({ projectId: project.id, livemode: false, key: k, requestHash: requestHash("POST", "/v1/players", { name: "retried" }), createdAt: sql`now() - ${sql.raw(`interval '${age}'`)}` });
    await claim("6 minutes", "k-abandoned");
    await claim("1 minute", "k-running");
    expect((await call("POST", "/v1/players", { key, form: { name: "retried" }, headers: { "idempotency-key": "k-abandoned" } })).status).toBe(200);
    const running = await call("POST", "/v1/players", { key, form: { name: "retried" }, headers: { "idempotency-key": "k-running" } });
    expect(expectError(running, 409, "idempotency_error").message).toMatch(/still being processed/);
  });
});
