import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { getDb } from "@/lib/db/client";
import type { ProjectWithKeys } from "@/lib/projects/service";
import { call, expectError, newProject } from "./helpers/api";

/**
 * Issue 29, point 11, through the API with a test key: on a server reachable beyond loopback (HOST=0.0.0.0) and
 * without OUTBOUND_ALLOW_PRIVATE, no tenant-set URL reaches a loopback or private address, so nobody can use the
 * delivery log (status and first KiB of the answer) to probe the server's network. Every refusal happens by
 * address: the loopback receiver here counts connections, and none arrives.
 */

let project: ProjectWithKeys;
let key: string;
let receiver: http.Server;
let target: string;
let connections = 0;

beforeAll(async () => {
  await getDb();
  project = await newProject("outbound private");
  key = project.keys.test.secret;
  receiver = http.createServer((req, res) => {
    req.resume();
    res.writeHead(200).end("SSH-2.0-OpenSSH_9.6 internal banner");
  });
  receiver.on("connection", () => connections++);
  await new Promise<void>((resolve) => receiver.listen(0, "127.0.0.1", resolve));
  target = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`;
});
afterAll(() => new Promise((r) => receiver?.close(r)));
afterEach(() => vi.unstubAllEnvs());

const reachableServer = () => {
  vi.stubEnv("HOST", "0.0.0.0");
  vi.stubEnv("OUTBOUND_ALLOW_PRIVATE", "");
};

describe("test keys on a server reachable beyond loopback", () => {
  it("refuses loopback and private URLs for the webhook, triggers, test sends and identity providers with a 400 naming the field", async () => {
    reachableServer();
    const before = connections;
    for (const url of [`${target}/hook`, "http://10.0.0.1:22/", `http://localhost:${new URL(target).port}/`, "http://[::1]:6379/"]) {
      expect(expectError(await call("POST", "/v1/settings/webhook", { key, json: { url } }), 400).details?.url, url).toBeDefined();
      expect(expectError(await call("POST", "/v1/subscriptions", { key, json: { topic: "test", triggers: [{ target: url, type: "webhook" }] } }), 400).details?.["triggers[0][target]"], url).toBeDefined();
      expect(expectError(await call("POST", "/v1/subscriptions/test", { key, json: { target: url } }), 400).details?.target, url).toBeDefined();
      const provider = expectError(await call("POST", "/iam/v1/oauth", { key, json: { provider: "oidc", enabled: true, aud: "game", jwksUrl: `${url}jwks`, baseUrl: url } }), 400);
      expect(Object.keys(provider.details ?? {}), url).toEqual(expect.arrayContaining([expect.stringMatching(/Url$/)]));
    }
    await new Promise((r) => setTimeout(r, 50));
    expect(connections).toBe(before);
  });

  it("a trigger set while private targets were allowed is refused at delivery, by address: the log shows the refusal, not the answer", async () => {
    // Allowed (this test process's HOST is loopback): the trigger is created and delivers.
    const created = await call("POST", "/v1/subscriptions", { key, json: { topic: "test", triggers: [{ target: `${target}/probe`, type: "webhook" }] } });
    expect(created.status, JSON.stringify(created.body)).toBe(200);
    const allowed = await call("POST", "/v1/subscriptions/test", { key, json: { subscription: created.body.id } });
    expect(allowed.body).toMatchObject({ sent: true, deliveries: [{ status: "success", responseStatus: 200 }] });

    reachableServer();
    const before = connections;
    const refused = await call("POST", "/v1/subscriptions/test", { key, json: { subscription: created.body.id } });
    expect(refused.status, JSON.stringify(refused.body)).toBe(200);
    expect(refused.body).toMatchObject({ sent: false, deliveries: [{ status: "failed", responseStatus: null, error: expect.stringMatching(/^refused: .*loopback/) }] });
    const log = await call("GET", `/v1/subscriptions/logs/${refused.body.deliveries[0].id}`, { key });
    expect(log.body.responseBody ?? null).toBeNull();
    expect(JSON.stringify(log.body)).not.toContain("OpenSSH");
    expect(connections).toBe(before);

    // The operator's explicit setting allows them again.
    vi.stubEnv("OUTBOUND_ALLOW_PRIVATE", "true");
    expect((await call("POST", "/v1/subscriptions/test", { key, json: { subscription: created.body.id } })).body).toMatchObject({ sent: true });
    expect(connections).toBeGreaterThan(before);
  });
});
