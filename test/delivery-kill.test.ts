import fs from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { entryPointAbi } from "@/contracts/artifacts";
import { startServer, type RunningServer } from "./helpers/server";
import { queryServerDatabase } from "./helpers/server-db";

const ENTRY_POINT = "0x5FF137D4b0FDCD49DcA30c7CF57E578a026d2789";
/** Intents sent; each publishes broadcast and successful, to one target (the project webhook). */
const N = 6;
/** Requests the receiver holds unanswered before the server is killed: deliveries in flight. */
const HELD = 3;

interface Got {
  webhookId: string;
  type: string;
  /** Received after the restart (answered 200), or before it (held, never answered). */
  afterRestart: boolean;
}

let server: RunningServer;
let receiver: http.Server;
let receiverUrl: string;
let restarted = false;
const got: Got[] = [];
const held: http.ServerResponse[] = [];

beforeAll(async () => {
  // Retries seconds apart; on PostgreSQL the restarted server takes the dead one's runs over after
  // the lease (3 s), on PGlite at once (it owns the database alone).
  server = await startServer({ WEBHOOK_RETRY_SCHEDULE: "1s,1s,2s,2s,4s,4s,8s,8s,8s,8s", RUNNER_LEASE_MS: "3000" });
  // Until the kill the receiver answers nothing: every delivery it gets is still in flight when the server dies.
  receiver = http.createServer((req, res) => {
    let body = "";
    req.on("data", (chunk) => (body += chunk));
    req.on("end", () => {
      got.push({ webhookId: String(req.headers["webhook-id"]), type: JSON.parse(body).type, afterRestart: restarted });
      if (restarted) res.writeHead(200).end("ok");
      else held.push(res);
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, "127.0.0.1", resolve));
  receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hooks`;
}, 600_000);
afterAll(async () => {
  receiver?.closeAllConnections();
  await new Promise<void>((resolve) => (receiver ? receiver.close(() => resolve()) : resolve()));
  await server?.stop();
});

const query = <T>(text: string) => queryServerDatabase<T>(server, text);

async function until<T>(what: string, probe: () => Promise<T | false | undefined>, timeoutMs: number): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== false && value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}\n${server.output().slice(-3000)}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe("a server killed while deliveries are in flight", () => {
  it("loses no event: after the restart every one arrives, each under its one webhook-id, as many ids as events published", async () => {
    const { keys } = JSON.parse(fs.readFileSync(path.join(server.dataDir, "default-project.json"), "utf8"));
    const api = async <T = any>(method: string, route: string, body?: unknown): Promise<T> => {
      const res = await fetch(`${server.url}${route}`, {
        method,
        headers: { authorization: `Bearer ${keys.test.secret}`, ...(body ? { "content-type": "application/json" } : {}) },
        body: body ? JSON.stringify(body) : undefined,
      });
      const json = await res.json();
      if (res.status !== 200) throw new Error(`${method} ${route}: ${res.status} ${JSON.stringify(json)}`);
      return json as T;
    };
    await api("POST", "/v1/settings/webhook", { url: receiverUrl });
    const abi = entryPointAbi.filter((i) => i.type === "function" && i.name === "depositTo");
    const contract = await api("POST", "/v1/contracts", { name: "EntryPoint", chainId: 31337, address: ENTRY_POINT, abi });
    const policy = await api("POST", "/v1/policies", { name: "Free", chainId: 31337, strategy: { sponsorSchema: "pay_for_user" } });
    await api("POST", "/v1/policy_rules", { policy: policy.id, type: "contract_functions", contract: contract.id, functionName: "depositTo" });
    const intents = await Promise.all(
      Array.from({ length: N }, () =>
        api<{ id: string }>("POST", "/v1/transaction_intents", { chainId: 31337, policy: policy.id, confirmationBlocks: 2, interactions: [{ contract: contract.id, functionName: "depositTo", functionArgs: [ENTRY_POINT] }] }),
      ),
    );

    // Deliveries reach the receiver, which holds them: the server dies with them in flight.
    await until(`${HELD} deliveries in flight`, async () => held.length >= HELD, 90_000);
    await server.kill();
    const inFlight = new Set(got.map((g) => g.webhookId));
    expect(inFlight.size).toBeGreaterThanOrEqual(HELD);
    // The dead server held those delivery runs mid-attempt: leased, their attempt step not stored.
    const running = await query<{ eventId: string }>(`select event_id as "eventId" from function_runs where function_id like '%deliver-event' and status = 'running'`);
    expect(running.map((r) => r.eventId.split(":")[1]).sort()).toEqual(expect.arrayContaining([...inFlight].sort()));
    for (const res of held) res.destroy();

    restarted = true;
    await server.restart();
    const all = await until(
      "every intent successful",
      async () => {
        const list = await Promise.all(intents.map((i) => api<{ id: string; response?: { status: number } }>("GET", `/v1/transaction_intents/${i.id}`)));
        return list.every((i) => i.response?.status === 1) && list;
      },
      120_000,
    );
    expect(all).toHaveLength(N);
    // An event published just before the kill but not yet fanned out is fanned out by the minute
    // sweep once it is 30 s old: up to about 90 s after the restart, so wait longer than that.
    await until("2N distinct events received", async () => new Set(got.map((g) => g.webhookId)).size >= 2 * N, 150_000);
    // Quiet for a while: nothing is still on its way.
    let count = got.length;
    await until(
      "the receiver quiet for 3 s",
      async () => {
        if (got.length !== count) count = got.length;
        else return true;
      },
      60_000,
    ).then(() => new Promise((r) => setTimeout(r, 3_000)));
    await server.kill();

    const messages = (await query<{ id: string }>("select id from outbound_events")).map((m) => m.id);
    const attempts = await query<{ messageId: string; status: string }>(`select message_id as "messageId", status from webhook_deliveries`);
    const ids = new Set(got.map((g) => g.webhookId));
    // As many distinct webhook-ids as events published (one target each), and they are those events.
    expect(messages).toHaveLength(2 * N);
    expect(ids).toEqual(new Set(messages));
    expect(got.filter((g) => g.type === "transaction_intent.broadcast").length).toBeGreaterThanOrEqual(N);
    // Each event was answered 200 once the server was back, the ones in flight at the kill included.
    for (const id of messages) expect(got.some((g) => g.webhookId === id && g.afterRestart), id).toBe(true);
    for (const id of inFlight) expect(got.filter((g) => g.webhookId === id).length, id).toBeGreaterThanOrEqual(2);
    // The log has a success for each.
    for (const id of messages) expect(attempts.some((a) => a.messageId === id && a.status === "success"), id).toBe(true);
  }, 500_000);
});
