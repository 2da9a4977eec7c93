import { desc, eq, isNull } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { getDb } from "@/lib/db/client";
import { requestLogs } from "@/lib/db/schema";
import { flushRequestLog } from "@/lib/http/request-log";
import { call, newProject } from "./helpers/api";

describe("request log", () => {
  it("records method, path, status, duration and mode of every request, and nothing secret", async () => {
    const project = await newProject();
    const created = await call("POST", "/v1/players", { key: project.keys.test.secret, form: { name: "logged", metadata: { secret: "s3cr3t" } } });
    await call("GET", `/v1/players/${created.body.id}`, { key: project.keys.live.secret });
    await flushRequestLog();
    const db = await getDb();
    const rows = await db.select().from(requestLogs).where(eq(requestLogs.projectId, project.id)).orderBy(desc(requestLogs.createdAt));
    expect(rows.map((r) => [r.method, r.path, r.status, r.livemode])).toEqual([
      ["GET", `/v1/players/${created.body.id}`, 404, true],
      ["POST", "/v1/players", 200, false],
    ]);
    for (const r of rows) {
      expect(r.id).toMatch(/^req_/);
      expect(r.durationMs).toBeGreaterThanOrEqual(0);
    }
    const dump = JSON.stringify(rows);
    expect(dump).not.toContain(project.keys.test.secret);
    expect(dump).not.toContain("s3cr3t");
  });

  it("writes no row for a request without a project (issue 29.9: unauthenticated floods must not grow storage)", async () => {
    const db = await getDb();
    const before = (await db.select().from(requestLogs).where(isNull(requestLogs.projectId))).length;
    const res = await call("GET", "/v1/contracts", { key: "sk_test_nope" });
    expect(res.status).toBe(401);
    await call("GET", "/v1/contracts");
    await flushRequestLog();
    expect(await db.select().from(requestLogs).where(eq(requestLogs.id, res.headers.get("x-request-id")!))).toEqual([]);
    expect((await db.select().from(requestLogs).where(isNull(requestLogs.projectId))).length).toBe(before);
  });
});
