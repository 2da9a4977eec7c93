import dns from "node:dns";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { getDb } from "@/lib/db/client";
import { call, expectError, newProject } from "./helpers/api";

/**
 * Issue 29, point 12: fan-out is bounded. Subscriptions per project and mode are capped (a 400 at the cap), and a
 * test send without a target goes to a bounded number of triggers, a bounded number at a time.
 */

let receiver: http.Server;
let url: string;
const state = { inFlight: 0, maxInFlight: 0, paths: [] as string[] };

beforeAll(async () => {
  await getDb();
  // Holds every request 150 ms, so overlapping deliveries are seen overlapping.
  receiver = http.createServer((req, res) => {
    state.inFlight++;
    state.maxInFlight = Math.max(state.maxInFlight, state.inFlight);
    state.paths.push(req.url!);
    req.resume();
    setTimeout(() => {
      state.inFlight--;
      res.writeHead(200).end("ok");
    }, 150);
  });
  await new Promise<void>((resolve) => receiver.listen(0, "127.0.0.1", resolve));
  url = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`;
});
afterAll(() => new Promise((r) => receiver?.close(r)));
afterEach(() => {
  vi.unstubAllEnvs();
  vi.restoreAllMocks();
});

const subscribe = (key: string, topic: string, ...paths: string[]) =>
  call("POST", "/v1/subscriptions", { key, json: { topic, triggers: paths.map((p) => ({ target: `${url}${p}`, type: "webhook" })) } });

describe("subscriptions per project and mode", () => {
  it("are capped by SUBSCRIPTIONS_PER_PROJECT: a clear 400 at the cap, per mode, a deleted one frees its place", async () => {
    vi.stubEnv("SUBSCRIPTIONS_PER_PROJECT", "3");
    const project = await newProject("subscription cap");
    const key = project.keys.test.secret;
    const made: string[] = [];
    for (let i = 0; i < 3; i++) {
      const res = await subscribe(key, "test", `/cap-${i}`);
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      made.push(res.body.id);
    }
    const refused = expectError(await subscribe(key, "test", "/cap-3"), 400, "invalid_request_error");
    expect(refused.message).toMatch(/already has 3 subscriptions in test mode, the most it may have/);
    expect(refused.message).toMatch(/SUBSCRIPTIONS_PER_PROJECT|delete one/);
    expect((await call("GET", "/v1/subscriptions", { key })).body.total).toBe(3);
    // The other mode has its own count (its https target's name resolves through a stub: no DNS query leaves).
    vi.spyOn(dns.promises, "lookup").mockResolvedValue([{ address: "93.184.215.14", family: 4 }] as never);
    expect((await call("POST", "/v1/subscriptions", { key: project.keys.live.secret, json: { topic: "test", triggers: [{ target: "https://hooks.example.com/x", type: "webhook" }] } })).status).toBe(200);
    // Deleted, it no longer counts.
    expect((await call("DELETE", `/v1/subscriptions/${made[0]}`, { key })).status).toBe(200);
    expect((await subscribe(key, "test", "/cap-4")).status).toBe(200);
    expectError(await subscribe(key, "test", "/cap-5"), 400);
  });

  it("hold under concurrent creation: one place left, one of five concurrent creations gets it", async () => {
    vi.stubEnv("SUBSCRIPTIONS_PER_PROJECT", "2");
    const project = await newProject("subscription cap race");
    const key = project.keys.test.secret;
    expect((await subscribe(key, "test", "/race-0")).status).toBe(200);
    const results = await Promise.all(Array.from({ length: 5 }, (_, i) => subscribe(key, "test", `/race-${i + 1}`)));
    expect(results.map((r) => r.status).sort()).toEqual([200, 400, 400, 400, 400]);
    expect((await call("GET", "/v1/subscriptions", { key })).body.total).toBe(2);
  });
});

describe("POST /v1/subscriptions/test", () => {
  it("without a target goes to the oldest SUBSCRIPTION_TEST_MAX_TRIGGERS triggers on the test topic, SUBSCRIPTION_TEST_CONCURRENCY at a time", async () => {
    vi.stubEnv("SUBSCRIPTION_TEST_MAX_TRIGGERS", "4");
    vi.stubEnv("SUBSCRIPTION_TEST_CONCURRENCY", "2");
    const project = await newProject("test fan-out");
    const key = project.keys.test.secret;
    const first = await subscribe(key, "test", "/t-1", "/t-2", "/t-3");
    const second = await subscribe(key, "test", "/t-4", "/t-5", "/t-6");
    expect(first.status).toBe(200);
    expect(second.status).toBe(200);
    const triggerIds = [...first.body.triggers, ...second.body.triggers].map((t: { id: string }) => t.id);

    state.maxInFlight = 0;
    state.paths = [];
    const res = await call("POST", "/v1/subscriptions/test", { key });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.sent).toBe(true);
    expect(res.body.deliveries.map((d: { trigger: string }) => d.trigger)).toEqual(triggerIds.slice(0, 4));
    expect(res.body.deliveries.every((d: { status: string }) => d.status === "success")).toBe(true);
    expect(state.paths.sort()).toEqual(["/t-1", "/t-2", "/t-3", "/t-4"]);
    expect(state.maxInFlight).toBe(2);

    // A subscription's own triggers (at most 10) go out at the same bounded concurrency.
    state.maxInFlight = 0;
    const bySubscription = await call("POST", "/v1/subscriptions/test", { key, json: { subscription: second.body.id } });
    expect(bySubscription.body.deliveries).toHaveLength(3);
    expect(state.maxInFlight).toBe(2);
  });
});
