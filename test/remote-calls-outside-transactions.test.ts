import http from "node:http";
import type { AddressInfo } from "node:net";
import { sql } from "drizzle-orm";
import { concat, encodeAbiParameters, type Hex } from "viem";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { serviceDeployment } from "@/lib/chain/contracts";
import { DUMMY_SIGNATURE } from "@/lib/chain/userop";
import { getDb } from "@/lib/db/client";
import { takeRemoteCallsInTransactions } from "@/lib/db/transaction-guard";
import { call, expectError, newProject } from "./helpers/api";
import { runInProcessOnly, sponsoredDeposits } from "./helpers/relay-fixtures";

/**
 * No request holds a database transaction open while it waits on a remote call: a registered
 * ERC-7677 paymaster that stalls its answer must not stall anybody else. On PGlite one open
 * transaction blocks every other query of the process; on PostgreSQL each holds one of the pool's
 * connections, so the pool is made small here: more stalled requests than it has connections.
 */
const POOL = 3;
process.env.DATABASE_POOL_SIZE = String(POOL); // read when this process opens its pool (first getDb)
process.env.TRANSACTION_GUARD = "1"; // and each remote call made inside a transaction is recorded (lib/db/transaction-guard.ts)

/** An ERC-7677 service answering stub data at once and holding every pm_getPaymasterData until released. */
async function stallingPaymaster(paymaster: Hex) {
  const held: (() => void)[] = [];
  let arrived = 0;
  const window = encodeAbiParameters([{ type: "uint48" }, { type: "uint48" }], [Math.floor(Date.now() / 1000) + 3600, 0]);
  const server = http.createServer((req, res) => {
    let body = "";
    req.on("data", (c) => (body += c));
    req.on("end", () => {
      const { id, method } = JSON.parse(body) as { id: number; method: string };
      const answer = () => res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ jsonrpc: "2.0", id, result: { paymasterAndData: concat([paymaster, window, DUMMY_SIGNATURE]) } }));
      if (method !== "pm_getPaymasterData") return answer();
      arrived++;
      held.push(answer);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/rpc`,
    arrived: () => arrived,
    release: () => held.splice(0).forEach((answer) => answer()),
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}

const within = <T>(ms: number, what: string, p: Promise<T>) =>
  Promise.race([p, new Promise<never>((_, reject) => setTimeout(() => reject(new Error(`${what} took more than ${ms} ms`)), ms))]);

async function until(what: string, ok: () => boolean, ms = 30_000) {
  const deadline = Date.now() + ms;
  while (!ok()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

/** Sessions of this database left idle inside a transaction (PostgreSQL only). */
async function idleInTransaction() {
  const rows = await (await getDb()).execute<{ n: number }>(
    sql`select count(*)::int as n from pg_stat_activity where datname = current_database() and state like 'idle in transaction%'`,
  );
  return (rows as unknown as { n: number }[])[0]?.n ?? (rows as unknown as { rows: { n: number }[] }).rows[0]!.n;
}

let key: string;
let peer: Awaited<ReturnType<typeof stallingPaymaster>>;
let body: () => Record<string, unknown>;

beforeAll(async () => {
  await runInProcessOnly(); // the intents stay pending: only their creation is under test
  const project = await newProject("remote calls outside transactions");
  key = project.keys.test.secret;
  peer = await stallingPaymaster(serviceDeployment().paymaster);
  const deposits = await sponsoredDeposits(key);
  const paymaster = await call("POST", "/v1/paymasters", { key, json: { address: serviceDeployment().paymaster, url: peer.url } });
  expect(paymaster.status, JSON.stringify(paymaster.body)).toBe(200);
  const policy = await call("POST", "/v1/policies", { key, json: { name: "through a slow paymaster", chainId: 31337, strategy: { sponsorSchema: "pay_for_user" }, paymaster: paymaster.body.id } });
  expect(policy.status, JSON.stringify(policy.body)).toBe(200);
  const rule = await call("POST", "/v1/policy_rules", { key, json: { policy: policy.body.id, type: "contract_functions", contract: deposits.contract, functionName: "depositTo" } });
  expect(rule.status, JSON.stringify(rule.body)).toBe(200);
  body = () => ({
    chainId: 31337,
    policy: policy.body.id,
    interactions: [{ contract: deposits.contract, functionName: "depositTo", functionArgs: [serviceDeployment().paymaster] }],
  });
}, 120_000);
afterAll(() => peer?.close());
afterEach(() => expect(takeRemoteCallsInTransactions()).toEqual([]));

describe.each([
  ["with an Idempotency-Key", (i: number) => ({ "idempotency-key": `slow-paymaster-${i}-${Date.now()}` })],
  ["without one", () => ({})],
])("a POST whose paymaster stalls, %s", (_, headers) => {
  it("holds no transaction open meanwhile: other requests are answered", async () => {
    const before = peer.arrived();
    const stalled = Array.from({ length: POOL }, (_, i) => call("POST", "/v1/transaction_intents", { key, json: body(), headers: headers(i) }));
    try {
      await until("a request to reach the paymaster", () => peer.arrived() > before);
      await new Promise((r) => setTimeout(r, 500)); // the others get as far as they can
      if (process.env.DATABASE_URL) expect(await within(5_000, "counting open transactions", idleInTransaction())).toBe(0);
      const other = await within(5_000, "another request, while the paymaster stalls", call("GET", "/v1/players", { key, query: { limit: 1 } }));
      expect(other.status).toBe(200);
      const write = await within(5_000, "another write, while the paymaster stalls", call("POST", "/v1/players", { key, json: { name: "not held up" } }));
      expect(write.status).toBe(200);
    } finally {
      // Every stalled request reaches the paymaster once the others are through, and is answered.
      const release = setInterval(peer.release, 50);
      const answers = await Promise.all(stalled).finally(() => clearInterval(release));
      for (const answer of answers) expect(answer.status, JSON.stringify(answer.body)).toBe(200);
    }
  }, 90_000);
});

describe("an idempotent request stalled past its claim's lease", () => {
  it("keeps its claim (renewed while it runs): a duplicate meanwhile gets 409 in progress, then the one answer", async () => {
    process.env.IDEMPOTENCY_LEASE_SECONDS = "1";
    try {
      const headers = { "idempotency-key": `slow-lease-${Date.now()}` };
      const before = peer.arrived();
      const first = call("POST", "/v1/transaction_intents", { key, json: body(), headers });
      await until("the request to reach the paymaster", () => peer.arrived() > before);
      await new Promise((r) => setTimeout(r, 2_500)); // two and a half leases
      const duplicate = await call("POST", "/v1/transaction_intents", { key, json: body(), headers });
      expect(expectError(duplicate, 409, "idempotency_error").message).toMatch(/in progress/);
      expect(duplicate.headers.get("retry-after")).toBe("1");
      expect(peer.arrived()).toBe(before + 1); // the duplicate did not run
      peer.release();
      const answered = await first;
      expect(answered.status, JSON.stringify(answered.body)).toBe(200);
      const replayed = await call("POST", "/v1/transaction_intents", { key, json: body(), headers });
      expect(replayed.headers.get("idempotent-replayed")).toBe("true");
      expect(replayed.body.id).toBe(answered.body.id);
    } finally {
      delete process.env.IDEMPOTENCY_LEASE_SECONDS;
    }
  }, 60_000);
});

describe("a policy given a paymaster or moved to another chain", () => {
  it("asks the chain for the paymaster's code outside the transaction that updates it", async () => {
    const paymaster = await call("POST", "/v1/paymasters", { key, json: { address: serviceDeployment().paymaster, url: peer.url } });
    const policy = await call("POST", "/v1/policies", { key, json: { name: "moving", chainId: 31337, strategy: { sponsorSchema: "pay_for_user" } } });
    const given = await call("POST", `/v1/policies/${policy.body.id}`, { key, json: { paymaster: paymaster.body.id } });
    expect(given.status, JSON.stringify(given.body)).toBe(200);
    const moved = await call("POST", `/v1/policies/${policy.body.id}`, { key, json: { chainId: 31338 } });
    expect(moved.status, JSON.stringify(moved.body)).toBe(200);
    expect(moved.body).toMatchObject({ chainId: 31338, paymaster: { id: paymaster.body.id } });
    // (afterEach: no chain call was made inside a transaction)
  });
});
