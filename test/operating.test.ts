import { createPublicClient, http as viemHttp } from "viem";
import { afterEach, describe, expect, it } from "vitest";
import { rpcFetch } from "@/lib/chain/rpc-fetch";
import { GET as metricsRoute } from "@/app/metrics/route";
import { GET as readyRoute } from "@/app/readyz/route";
import { GET as healthRoute } from "@/app/healthz/route";
import { ensureRunner } from "@/inngest/jobs";
import { drizzle } from "drizzle-orm/postgres-js";
import postgres from "postgres";
import { sql } from "drizzle-orm";
import { errorResponse } from "@/lib/http/handle";
import { call, newProject } from "./helpers/api";
import { loopbackServer } from "./helpers/loopback-server";

// Next.js hands route handlers the socket's address as X-Forwarded-For (lib/http/client-address.ts).
const from = (address: string, headers: Record<string, string> = {}) =>
  new Request("http://127.0.0.1:3000/metrics", { headers: { "x-forwarded-for": address, ...headers } });

const saved = { METRICS_TOKEN: process.env.METRICS_TOKEN, rpc: process.env.CHAIN_31338_RPC_URL };
afterEach(() => {
  if (saved.METRICS_TOKEN === undefined) delete process.env.METRICS_TOKEN;
  else process.env.METRICS_TOKEN = saved.METRICS_TOKEN;
  process.env.CHAIN_31338_RPC_URL = saved.rpc;
});

describe("GET /metrics", () => {
  it("serves Prometheus text to loopback: requests by operation and status, latency, runner and database gauges", async () => {
    const { keys } = await newProject("metrics");
    await call("POST", "/v1/players", { key: keys.test.secret, form: { name: "counted" } });
    await call("GET", "/v1/players/pla_00000000-0000-0000-0000-000000000000", { key: keys.test.secret });
    const res = await metricsRoute(from("127.0.0.1"));
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toContain("text/plain");
    const text = await res.text();
    expect(text).toMatch(/^http_requests_total\{operation="createPlayer",status="200"\} [1-9]/m);
    expect(text).toMatch(/^http_requests_total\{operation="getPlayer",status="404"\} [1-9]/m);
    expect(text).toMatch(/^http_request_duration_seconds_bucket\{le="0\.5",operation="createPlayer"\} [1-9]/m);
    expect(text).toMatch(/^transaction_intents_unsettled\{status="pending"\} \d+/m);
    expect(text).toContain("# TYPE runner_queue_depth gauge");
    expect(text).toContain("# TYPE process_resident_memory_bytes gauge");
    expect(text).not.toContain(keys.test.secret);
  });

  it("refuses other addresses without the token, and takes the token from anywhere", async () => {
    const refused = await metricsRoute(from("203.0.113.9"));
    expect(refused.status).toBe(401);
    expect((await refused.json()).error.type).toBe("authentication_error");
    expect(refused.headers.get("www-authenticate")).toBe('Bearer realm="metrics"');
    process.env.METRICS_TOKEN = "metrics-token-for-the-test";
    expect((await metricsRoute(from("203.0.113.9"))).status).toBe(401);
    expect((await metricsRoute(from("203.0.113.9", { authorization: "Bearer wrong" }))).status).toBe(401);
    expect((await metricsRoute(from("203.0.113.9", { authorization: "Bearer metrics-token-for-the-test" }))).status).toBe(200);
    // A wrong token is refused even from loopback: a credential was sent, and it is wrong.
    expect((await metricsRoute(from("127.0.0.1", { authorization: "Bearer wrong" }))).status).toBe(401);
  });
});

describe("GET /healthz and /readyz", () => {
  it("healthz answers while the process runs; readyz checks the database, each chain and the runner", async () => {
    expect(await healthRoute().json()).toEqual({ status: "ok" });
    await ensureRunner();
    await new Promise((r) => setTimeout(r, 1100)); // past the cached answer of an earlier probe
    const ready = await readyRoute();
    const body = await ready.json();
    expect(ready.status).toBe(200);
    expect(body).toMatchObject({ status: "ready", checks: { database: { ok: true }, runner: { ok: true, mode: "embedded" }, shutdown: { ok: true } } });
    expect(Object.keys(body.checks.chains).sort()).toEqual(["31337", "31338", "31339"]);
    expect(body.checks.chains["31337"]).toMatchObject({ ok: true, block: expect.any(Number) });

    // A chain that stops answering makes the process not ready, naming the chain and never its URL.
    process.env.CHAIN_31338_RPC_URL = "http://127.0.0.1:9/secret-path-0123456789";
    await new Promise((r) => setTimeout(r, 1100));
    const down = await readyRoute();
    const text = await down.text();
    expect(down.status).toBe(503);
    expect(JSON.parse(text)).toMatchObject({ status: "not_ready", checks: { chains: { "31338": { ok: false }, "31337": { ok: true } } } });
    expect(text).not.toContain("secret-path");
  });
});

describe("a database that cannot be reached", () => {
  it("is a 503 with Retry-After, not a 500: the client retries", async () => {
    // A real driver error: postgres.js connecting to a port nobody listens on, through drizzle as the service queries.
    const client = postgres("postgres://postgres@127.0.0.1:9/none", { max: 1, connect_timeout: 2 });
    const err = await drizzle(client).execute(sql`select 1`).then(
      () => null,
      (e: unknown) => e,
    );
    await client.end();
    expect(err).toBeTruthy();
    const res = errorResponse(err, "req_test");
    expect(res.status).toBe(503);
    expect(res.headers.get("retry-after")).toBe("1");
    expect((await res.json()).error).toMatchObject({ type: "api_error", message: expect.stringContaining("Retry") });
  });
});

describe("a chain node that hangs up mid-request", () => {
  it("is a 502 naming the node, not the database's 503: node:http's ECONNRESET inside viem's error is the node's", async () => {
    // A loopback node that drops every connection before answering (what a provider's load balancer does).
    const node = await loopbackServer((req) => req.socket.destroy());
    try {
      const client = createPublicClient({ transport: viemHttp(node.url, { retryCount: 0, fetchFn: rpcFetch }) });
      const err = await client.getBlockNumber().then(
        () => null,
        (e: unknown) => e,
      );
      expect(err).toBeTruthy();
      const res = errorResponse(err, "req_test");
      expect(res.status).toBe(502);
      expect((await res.json()).error).toMatchObject({ type: "api_error", message: expect.stringContaining("chain node") });
    } finally {
      await node.close();
    }
  });
});
