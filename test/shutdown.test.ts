import fs from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { entryPointAbi } from "@/contracts/artifacts";
import { startServer, type RunningServer } from "./helpers/server";
import { queryServerDatabase } from "./helpers/server-db";

const ENTRY_POINT = "0x5FF137D4b0FDCD49DcA30c7CF57E578a026d2789";

let server: RunningServer;
const receivers: http.Server[] = [];
/** Webhook deliveries: held unanswered until `answering`, then answered 200. */
const got: { webhookId: string; answered: boolean }[] = [];
const held: http.ServerResponse[] = [];
let answering = false;
let hooksUrl: string;
/** A receiver answering after `slowMs`, for API requests that stay in flight a while. */
let slowMs = 1000;
let slowHits = 0;
let slowUrl: string;

async function listen(handler: http.RequestListener): Promise<string> {
  const receiver = http.createServer(handler);
  receivers.push(receiver);
  await new Promise<void>((resolve) => receiver.listen(0, "127.0.0.1", resolve));
  return `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hooks`;
}

beforeAll(async () => {
  // A long lease: only a released one lets the restarted server take the runs at once.
  server = await startServer({ SHUTDOWN_GRACE_MS: "1500", RUNNER_LEASE_MS: "60000" });
  hooksUrl = await listen((req, res) => {
    req.resume();
    req.on("end", () => {
      got.push({ webhookId: String(req.headers["webhook-id"]), answered: answering });
      if (answering) res.writeHead(200).end("ok");
      else held.push(res);
    });
  });
  slowUrl = await listen((req, res) => {
    req.resume();
    slowHits++;
    setTimeout(() => res.writeHead(200).end("ok"), slowMs);
  });
}, 600_000);
afterAll(async () => {
  for (const receiver of receivers) {
    receiver.closeAllConnections();
    await new Promise<void>((resolve) => receiver.close(() => resolve()));
  }
  await server?.stop();
});

const query = <T>(text: string) => queryServerDatabase<T>(server, text);

async function until(what: string, probe: () => boolean | Promise<boolean>, timeoutMs: number) {
  const deadline = Date.now() + timeoutMs;
  while (!(await probe())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}\n${server.output().slice(-3000)}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe("SIGTERM", () => {
  it("stops taking requests, finishes the ones in flight, hands running runs over with their leases released, and exits 0", async () => {
    const { keys } = JSON.parse(fs.readFileSync(path.join(server.dataDir, "default-project.json"), "utf8"));
    const api = (method: string, route: string, body?: unknown) =>
      fetch(`${server.url}${route}`, {
        method,
        headers: { authorization: `Bearer ${keys.test.secret}`, ...(body ? { "content-type": "application/json" } : {}) },
        body: body ? JSON.stringify(body) : undefined,
      });
    const ok = async (res: Promise<Response>) => {
      const r = await res;
      const json = await r.json();
      if (r.status !== 200) throw new Error(`${r.status} ${JSON.stringify(json)}`);
      return json;
    };
    await ok(api("POST", "/v1/settings/webhook", { url: hooksUrl }));
    const abi = entryPointAbi.filter((i) => i.type === "function" && i.name === "depositTo");
    const contract = await ok(api("POST", "/v1/contracts", { name: "EntryPoint", chainId: 31337, address: ENTRY_POINT, abi }));
    const policy = await ok(api("POST", "/v1/policies", { name: "Free", chainId: 31337, strategy: { sponsorSchema: "pay_for_user" } }));
    await ok(api("POST", "/v1/policy_rules", { policy: policy.id, type: "contract_functions", contract: contract.id, functionName: "depositTo" }));
    await ok(api("POST", "/v1/transaction_intents", { chainId: 31337, policy: policy.id, interactions: [{ contract: contract.id, functionName: "depositTo", functionArgs: [ENTRY_POINT] }] }));

    // A delivery run is executing (its receiver holds the request), and an API request is in flight.
    await until("a delivery in flight", () => held.length > 0, 60_000);
    const inFlight = api("POST", "/v1/subscriptions/test", { target: slowUrl });
    await until("the API request in flight", () => slowHits > 0, 10_000);
    server.signal("SIGTERM");

    const answered = await inFlight;
    expect(answered.status).toBe(200);
    expect((await answered.json()).sent).toBe(true);
    // No new request is taken: a new connection is refused, a kept-alive one answered 503 until the process is gone.
    const after = await fetch(`${server.url}/healthz`).then((r) => r.status, () => "refused");
    expect([503, "refused"]).toContain(after);

    // It exits while the receiver still holds the delivery (released below): it did not wait for the run to finish.
    expect(await server.exited()).toEqual({ code: 0, signal: null });
    expect(held.length).toBeGreaterThan(0);
    expect(server.output()).toContain("shutting down: no new requests");
    expect(server.output()).toContain("handed over");

    // The run held mid-delivery was handed over: still "running", its lease released.
    const runs = await query<{ status: string; lockedUntil: string | null }>(
      `select status, locked_until as "lockedUntil" from function_runs where function_id like '%deliver-event' and status = 'running'`,
    );
    expect(runs.length).toBeGreaterThan(0);
    expect(runs.every((r) => r.lockedUntil === null)).toBe(true);
    const handedOver = new Set(got.map((g) => g.webhookId));
    for (const res of held) res.destroy();

    // Restarted, it takes the handed-over runs at once: the same events arrive again within 30 s, where waiting for the
    // lease would take a minute.
    answering = true;
    await server.restart();
    await until("the handed-over deliveries redelivered", () => [...handedOver].every((id) => got.some((g) => g.webhookId === id && g.answered)), 30_000);
  }, 300_000);

  it("exits at once on a second signal", async () => {
    slowMs = 20_000;
    const before = slowHits;
    const { keys } = JSON.parse(fs.readFileSync(path.join(server.dataDir, "default-project.json"), "utf8"));
    const stuck = fetch(`${server.url}/v1/subscriptions/test`, {
      method: "POST",
      headers: { authorization: `Bearer ${keys.test.secret}`, "content-type": "application/json" },
      body: JSON.stringify({ target: slowUrl }),
    }).catch(() => null);
    await until("the API request in flight", () => slowHits > before, 10_000);
    server.signal("SIGTERM");
    await new Promise((r) => setTimeout(r, 300));
    server.signal("SIGTERM");
    // Exit code 1 at once, not the graceful 0 after the grace periods, and the request in flight gets no answer.
    expect(await server.exited()).toEqual({ code: 1, signal: null });
    expect(server.output()).toContain("second signal: exiting now");
    expect(await stuck).toBeNull();
    await server.restart(); // for afterAll's stop
  }, 120_000);
});
