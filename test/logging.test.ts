import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { log, flushLog } from "@/lib/log";
import { call, newProject } from "./helpers/api";

const root = path.resolve(import.meta.dirname, "..");

/** This process's log lines, parsed (tests log to LOG_FILE: test/helpers/worker-setup.ts). */
async function logLines(): Promise<Record<string, unknown>[]> {
  await flushLog();
  return fs
    .readFileSync(process.env.LOG_FILE!, "utf8")
    .split("\n")
    .filter(Boolean)
    .map((line) => JSON.parse(line) as Record<string, unknown>);
}

describe("logs", () => {
  it("write one JSON line per request: request id, project, mode, operation, status, latency, and no key", async () => {
    const project = await newProject("logging");
    const key = project.keys.test.secret;
    const created = await call("POST", "/v1/players", { key, form: { name: "logged" } });
    const missing = await call("GET", "/v1/players/pla_00000000-0000-0000-0000-000000000000", { key });
    const lines = await logLines();
    const line = lines.find((l) => l.requestId === created.headers.get("x-request-id"));
    expect(line).toMatchObject({ level: "info", msg: "request", projectId: project.id, mode: "test", operation: "createPlayer", method: "POST", status: 200 });
    expect(typeof line!.durationMs).toBe("number");
    expect(typeof line!.time).toBe("string"); // ISO time
    expect(lines.find((l) => l.requestId === missing.headers.get("x-request-id"))).toMatchObject({ operation: "getPlayer", status: 404 });
    const unauthenticated = await call("GET", "/v1/players", { key: "sk_test_not-a-real-key-0000000000" });
    expect((await logLines()).find((l) => l.requestId === unauthenticated.headers.get("x-request-id"))).toMatchObject({ status: 401, operation: "getPlayers" });
    const text = fs.readFileSync(process.env.LOG_FILE!, "utf8");
    expect(text).not.toContain(key);
    expect(text).not.toContain("sk_test_not-a-real-key");
  });

  it("censor secret fields wherever a caller nests them, and cut URLs in errors to their host", async () => {
    log.warn({ trigger: { secret: "whsec_should-not-appear-1234" }, authorization: "Bearer sk_test_should-not-appear", err: new Error("fetch https://user:pw@rpc.example.com/v2/abcdef0123456789 failed") }, "redaction probe");
    const probe = (await logLines()).find((l) => l.msg === "redaction probe")!;
    expect(probe.trigger).toEqual({ secret: "[redacted]" });
    expect(probe.authorization).toBe("[redacted]");
    expect(String(probe.err)).toContain("https://rpc.example.com/[redacted]");
    expect(JSON.stringify(probe)).not.toMatch(/should-not-appear|abcdef0123456789|user:pw/);
  });

  it("are the only output of server code: no console.* left in lib, inngest, app or instrumentation", () => {
    const offenders: string[] = [];
    const check = (file: string) =>
      fs
        .readFileSync(file, "utf8")
        .split("\n")
        .forEach((line, i) => {
          if (/\bconsole\.(log|info|warn|error|debug|trace)\(/.test(line)) offenders.push(`${path.relative(root, file)}:${i + 1}`);
        });
    const walk = (dir: string) => {
      for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
        const file = path.join(dir, entry.name);
        if (entry.isDirectory()) walk(file);
        else if (/\.(ts|tsx)$/.test(entry.name) && !/\.test\.ts$/.test(entry.name)) check(file);
      }
    };
    for (const dir of ["lib", "inngest", "app"]) walk(path.join(root, dir));
    check(path.join(root, "instrumentation.ts"));
    expect(offenders).toEqual([]);
  });
});
