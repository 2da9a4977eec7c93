import dns from "node:dns";
import http from "node:http";
import type { AddressInfo } from "node:net";
import Openfort from "@openfort/openfort-node";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { entryPointAbi } from "@/contracts/artifacts";
import { serviceDeployment } from "@/lib/chain/contracts";
import type { ProjectWithKeys } from "@/lib/projects/service";
import { getDb } from "@/lib/db/client";
import { webhookSignature } from "@/lib/deliveries/signing";
import { sendTestEvent } from "@/lib/webhooks/service";
import { call, expectError, newProject } from "./helpers/api";

interface Received {
  body: string;
  signature: string;
  at: number;
}

let project: ProjectWithKeys;
let key: string;
let server: http.Server;
let url: string;
const received: Received[] = [];
let failuresLeft = 0;

beforeAll(async () => {
  project = await newProject("webhooks");
  key = project.keys.test.secret;
  server = http.createServer((req, res) => {
    let body = "";
    req.on("data", (chunk) => (body += chunk));
    req.on("end", () => {
      if (failuresLeft > 0) {
        failuresLeft--;
        res.writeHead(503).end("busy");
        return;
      }
      received.push({ body, signature: String(req.headers["openfort-signature"]), at: Date.now() });
      res.writeHead(200).end("ok");
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

async function eventsFor(intentId: string, count: number, timeoutMs = 30_000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const mine = received.filter((r) => JSON.parse(r.body).data.id === intentId);
    if (mine.length >= count) return mine;
    if (Date.now() > deadline) throw new Error(`got ${mine.length} of ${count} webhook events for ${intentId}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe("the project webhook", () => {
  it("is set, replaced and removed per mode, and refuses bad URLs", async () => {
    const own = await newProject("webhook settings");
    const set = await call("POST", "/v1/settings/webhook", { key: own.keys.test.secret, form: { url: "https://example.com/a" } });
    expect(set.body).toMatchObject({ object: "webhook", url: "https://example.com/a", livemode: false });
    expect((await call("POST", "/v1/settings/webhook", { key: own.keys.test.secret, json: { url: "https://example.com/b" } })).body.url).toBe("https://example.com/b");
    expectError(await call("DELETE", "/v1/settings/webhook", { key: own.keys.live.secret }), 404);
    expect((await call("DELETE", "/v1/settings/webhook", { key: own.keys.test.secret })).body).toMatchObject({ deleted: true, url: "https://example.com/b" });
    for (const bad of ["", "not a url", "ftp://example.com/x", "javascript:alert(1)"]) {
      expect(expectError(await call("POST", "/v1/settings/webhook", { key: own.keys.test.secret, json: { url: bad } }), 400).details?.url).toBeDefined();
    }
    expectError(await call("POST", "/v1/settings/webhook", { key: own.keys.test.secret, json: {} }), 400);
  });

  it("receives broadcast, then successful after the confirmation blocks, signed so the official SDK verifies them; a failed delivery is retried", async () => {
    await call("POST", "/v1/settings/webhook", { key, json: { url } });
    const { body: contract } = await call("POST", "/v1/contracts", {
      key,
      json: { name: "EntryPoint", chainId: 31337, address: serviceDeployment().entryPoint, abi: entryPointAbi.filter((i) => i.type === "function" && i.name === "depositTo") },
    });
    const { body: policy } = await call("POST", "/v1/policies", { key, json: { name: "p", chainId: 31337, strategy: { sponsorSchema: "pay_for_user" } } });
    await call("POST", "/v1/policy_rules", { key, json: { policy: policy.id, type: "contract_functions", contract: contract.id, functionName: "depositTo" } });
    failuresLeft = 1;
    const { body: intent } = await call("POST", "/v1/transaction_intents", {
      key,
      json: { chainId: 31337, policy: policy.id, confirmationBlocks: 2, interactions: [{ contract: contract.id, functionName: "depositTo", functionArgs: [serviceDeployment().paymaster] }] },
    });
    expect(intent.id).toMatch(/^tin_/);
    const events = await eventsFor(intent.id, 2);
    const openfort = new Openfort(key, "http://127.0.0.1:1");
    const parsed = await Promise.all(events.map((e) => openfort.constructWebhookEvent(e.body, e.signature)));
    // Each event is its own delivery: the broadcast one, refused once, arrives after its retry, so after successful.
    expect(parsed.map((e: { type: string }) => e.type).sort()).toEqual(["transaction_intent.broadcast", "transaction_intent.successful"]);
    const successful = parsed.find((e: { type: string }) => e.type === "transaction_intent.successful") as { date: number; data: { id: string; response: { status: number; blockNumber: number } } };
    expect(successful.data).toMatchObject({ id: intent.id, response: { status: 1 } });
    expect(typeof successful.date).toBe("number");
    // a tampered body does not verify
    await expect(openfort.constructWebhookEvent(events[0]!.body.replace(intent.id, "tin_tampered"), events[0]!.signature)).rejects.toThrow(/Invalid signature/);
    expect(webhookSignature(key, events[0]!.body)).toBe(events[0]!.signature);
    expect(failuresLeft).toBe(0);
  }, 60_000);
});

/** Answers these names from the table instead of DNS (no query leaves the machine); other names resolve as usual. */
function resolveAs(table: Record<string, string>) {
  const real = dns.promises.lookup.bind(dns.promises);
  vi.spyOn(dns.promises, "lookup").mockImplementation((async (hostname: string, options: dns.LookupOptions) =>
    table[hostname] ? [{ address: table[hostname], family: table[hostname].includes(":") ? 6 : 4 }] : real(hostname, options)) as never);
}

describe("webhook URLs are outbound URLs (SSRF rules, docs/security.md: Outbound requests)", () => {
  afterEach(() => vi.restoreAllMocks());

  it("live keys: https only, and no loopback, private, link-local or metadata address, odd IPv4 notations included: 400 naming url", async () => {
    const own = await newProject("webhook ssrf");
    const live = own.keys.live.secret;
    const issue = ["http://127.0.0.1:5432/", "http://169.254.169.254/latest/meta-data/iam/security-credentials/", "http://[::1]/", "http://0x7f000001/"];
    const https = ["https://127.0.0.1:5432/", "https://169.254.169.254/latest/meta-data/", "https://[::1]/", "https://0x7f000001/", "https://2130706433/", "https://0177.0.0.1/", "https://10.0.0.1/", "https://[fe80::1]/", "https://localhost/"];
    for (const url of [...issue, ...https]) {
      const error = expectError(await call("POST", "/v1/settings/webhook", { key: live, json: { url } }), 400, "invalid_request_error");
      expect(error.details?.url, url).toMatchObject({ value: url, message: expect.any(String) });
    }
    // A name is judged by what it resolves to.
    resolveAs({ "hooks.internal.example": "10.0.0.7", "hooks.example.com": "93.184.215.14" });
    const internal = expectError(await call("POST", "/v1/settings/webhook", { key: live, json: { url: "https://hooks.internal.example/in" } }), 400);
    expect(internal.details?.url?.message).toBe("hooks.internal.example resolves to 10.0.0.7, a private address");
    expect((await call("POST", "/v1/settings/webhook", { key: live, json: { url: "https://hooks.example.com/in" } })).body).toMatchObject({ url: "https://hooks.example.com/in", livemode: true });
    // Test keys may target local addresses (local development), never the metadata endpoint.
    expect((await call("POST", "/v1/settings/webhook", { key: own.keys.test.secret, json: { url: "http://127.0.0.1:5432/" } })).status).toBe(200);
    expectError(await call("POST", "/v1/settings/webhook", { key: own.keys.test.secret, json: { url: "http://169.254.169.254/latest/" } }), 400);
  });

  it("a live webhook whose name later resolves to loopback is refused at delivery (the dashboard's test event says so) and nothing is sent", async () => {
    const own = await newProject("webhook rebinding");
    const port = (server.address() as AddressInfo).port;
    resolveAs({ "hooks.example.com": "93.184.215.14" });
    await call("POST", "/v1/settings/webhook", { key: own.keys.live.secret, json: { url: `https://hooks.example.com:${port}/hooks` } });
    vi.restoreAllMocks();
    resolveAs({ "hooks.example.com": "127.0.0.1" });
    const before = received.length;
    const attempt = await sendTestEvent(await getDb(), { projectId: own.id, livemode: true });
    expect(attempt).toMatchObject({ status: "failed", responseStatus: null, error: "refused: hooks.example.com resolves to 127.0.0.1, a loopback address" });
    // Test mode: a name resolving to the metadata endpoint is refused too.
    resolveAs({ "meta.example.com": "169.254.169.254" });
    await call("POST", "/v1/settings/webhook", { key: own.keys.test.secret, json: { url: `http://meta.example.com:${port}/hooks` } });
    expect(await sendTestEvent(await getDb(), { projectId: own.id, livemode: false })).toMatchObject({ status: "failed", error: "refused: meta.example.com resolves to 169.254.169.254, a cloud metadata address" });
    expect(received.length).toBe(before);
  });
});
