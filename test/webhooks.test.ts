import http from "node:http";
import type { AddressInfo } from "node:net";
import Openfort from "@openfort/openfort-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { entryPointAbi } from "@/contracts/artifacts";
import { serviceDeployment } from "@/lib/chain/contracts";
import type { ProjectWithKeys } from "@/lib/projects/service";
import { webhookSignature } from "@/lib/webhooks/service";
import { call, expectError, newProject } from "./api";

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
    expect(parsed.map((e: { type: string }) => e.type)).toEqual(["transaction_intent.broadcast", "transaction_intent.successful"]);
    const successful = parsed[1] as { date: number; data: { id: string; response: { status: number; blockNumber: number } } };
    expect(successful.data).toMatchObject({ id: intent.id, response: { status: 1 } });
    expect(typeof successful.date).toBe("number");
    // a tampered body does not verify
    await expect(openfort.constructWebhookEvent(events[0]!.body.replace("broadcast", "cancelled"), events[0]!.signature)).rejects.toThrow(/Invalid signature/);
    expect(webhookSignature(key, events[0]!.body)).toBe(events[0]!.signature);
    expect(failuresLeft).toBe(0);
  }, 60_000);
});
