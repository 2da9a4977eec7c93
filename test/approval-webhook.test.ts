import http from "node:http";
import type { AddressInfo } from "node:net";
import net from "node:net";
import { eq } from "drizzle-orm";
import { Webhook } from "standardwebhooks";
import type { Address, Hex } from "viem";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { getDb, type Db } from "@/lib/db/client";
import { policyRules, webhookDeliveries } from "@/lib/db/schema";
import { newId } from "@/lib/ids";
import type { PolicyRuleRow } from "@/lib/policies/rules";
import { getPolicy, type PolicyRow } from "@/lib/policies/service";
import type { ProjectWithKeys } from "@/lib/projects/service";
import {
  APPROVAL_ANSWER_MAX_BYTES,
  approvalCalls,
  approvalPayload,
  approveSponsorship,
  askApproval,
  newApprovalSecret,
  sealApprovalSecret,
  type ApprovalRequest,
} from "@/lib/sponsorship/approval";
import { SponsorshipDeclined } from "@/lib/sponsorship/declines";
import { call, expectError, newProject } from "./helpers/api";

/**
 * The approval_webhook rule's call, against a real receiver on 127.0.0.1 whose paths behave as a developer's server
 * might: yes, no (with a reason), slowly, a broken answer, a huge one. Every call is checked in the delivery log.
 */

interface Received {
  path: string;
  headers: http.IncomingHttpHeaders;
  body: string;
}

/** Answers per path; `/slow` answers after 3 s, `/drip` sends its headers at once and its body after 3 s. */
const SLOW_MS = 3000;
/** The timeout of the rules that meet them (others have the default, 2 s: a loaded machine answers a first call slowly). */
const SHORT = 300;
const received: Received[] = [];
let connections = 0;
let receiver: http.Server;
let base: string;
/** A port nothing listens on (a server opened there and closed). */
let closedPort: number;
/** The answers `/slow` and `/drip` hold back, in the order asked: whether each has been sent yet. */
const heldBack: { sent: boolean }[] = [];
const later = (send: () => void) => {
  const held = { sent: false };
  heldBack.push(held);
  setTimeout(() => {
    held.sent = true;
    send();
  }, SLOW_MS);
};

function answer(path: string, res: http.ServerResponse) {
  const json = (status: number, body: string) => res.writeHead(status, { "content-type": "application/json" }).end(body);
  switch (path) {
    case "/yes":
      return json(200, JSON.stringify({ sponsor: true }));
    case "/no":
      return json(200, JSON.stringify({ sponsor: false, reason: "player is on the\r\nblock list", extra: 1 }));
    case "/slow":
      return later(() => json(200, JSON.stringify({ sponsor: true })));
    case "/drip":
      res.writeHead(200, { "content-type": "application/json" });
      res.write('{"sponsor":');
      return later(() => res.end("true}"));
    case "/not-json":
      return json(200, "sure, go ahead");
    case "/wrong-shape":
      return json(200, JSON.stringify({ sponsor: "yes" }));
    case "/huge":
      return json(200, JSON.stringify({ sponsor: true, reason: "x".repeat(APPROVAL_ANSWER_MAX_BYTES * 4) }));
    case "/error":
      return json(500, JSON.stringify({ sponsor: true }));
    case "/redirect":
      return res.writeHead(302, { location: "/yes" }).end();
    default:
      return json(404, "{}");
  }
}

let db: Db;
let project: ProjectWithKeys;
let key: string;
const ctx = () => ({ projectId: project.id, livemode: false });
let policy: PolicyRow;
let request: ApprovalRequest;

beforeAll(async () => {
  db = await getDb();
  receiver = http.createServer((req, res) => {
    let body = "";
    req.on("data", (c) => (body += c));
    req.on("end", () => {
      received.push({ path: req.url ?? "", headers: req.headers, body });
      answer(req.url ?? "", res);
    });
  });
  receiver.on("connection", () => connections++);
  await new Promise<void>((resolve) => receiver.listen(0, "127.0.0.1", resolve));
  base = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`;
  const closed = http.createServer();
  await new Promise<void>((resolve) => closed.listen(0, "127.0.0.1", resolve));
  closedPort = (closed.address() as AddressInfo).port;
  await new Promise((resolve) => closed.close(resolve));

  project = await newProject("approval webhooks");
  key = project.keys.test.secret;
  const created = await call("POST", "/v1/policies", { key, json: { name: "approved", chainId: 31337, strategy: { sponsorSchema: "pay_for_user" } } });
  expect(created.status, JSON.stringify(created.body)).toBe(200);
  policy = await getPolicy(db, ctx(), created.body.id);
  const player = (await call("POST", "/v1/players", { key, json: { name: "asker" } })).body.id as string;
  const account = await call("POST", "/v1/accounts", { key, json: { player, chainId: 31337 } });
  expect(account.status, JSON.stringify(account.body)).toBe(200);
  const target = "0x00000000000000000000000000000000000000aa" as Address;
  request = {
    playerId: player,
    account: { id: account.body.id, address: account.body.address },
    chainId: 31337,
    calls: approvalCalls([{ to: target, data: "0xd0e30db0", value: 10n ** 15n }], [{ contractId: "con_registered", to: target, functionName: "deposit", self: false }]),
    maxCost: 10n ** 15n,
    usdPrice: 2500,
    source: "transaction_intent",
    userOperationHash: `0x${"ab".repeat(32)}` as Hex,
  };
});

afterAll(async () => {
  receiver?.closeAllConnections();
  await new Promise((resolve) => receiver?.close(resolve));
});
afterEach(() => {
  vi.unstubAllEnvs();
  vi.restoreAllMocks();
});

/** An approval_webhook rule as the rules API stores it: its secret sealed to it. */
async function rule(path: string, fields: { onError?: "sponsor" | "decline"; timeoutMs?: number; url?: string; livemode?: boolean } = {}) {
  const id = newId("policyRule");
  const secret = newApprovalSecret();
  const [row] = await db
    .insert(policyRules)
    .values({
      id,
      ...ctx(),
      policyId: policy.id,
      type: "approval_webhook",
      url: fields.url ?? `${base}${path}`,
      timeoutMs: fields.timeoutMs ?? 2000,
      onError: fields.onError ?? "decline",
      encryptedSecret: sealApprovalSecret(secret, id),
    })
    .returning();
  return { row: row!, secret };
}

const logOf = async (ruleId: string) => db.select().from(webhookDeliveries).where(eq(webhookDeliveries.objectId, ruleId));
const at = (path: string) => received.filter((r) => r.path === path);

async function ask(path: string, fields: Parameters<typeof rule>[1] = {}) {
  const { row, secret } = await rule(path, fields);
  const payload = approvalPayload(ctx(), policy, row, request);
  const outcome = await askApproval(db, ctx(), row, payload);
  const [logged, ...more] = await logOf(row.id);
  expect(more).toHaveLength(0);
  return { row, secret, payload, outcome, logged: logged! };
}

describe("askApproval: what the server answers decides", () => {
  it("yes: approved; the request is the documented JSON, signed so a receiver verifies it with the rule's secret (and a forgery fails)", async () => {
    const before = at("/yes").length;
    const { row, secret, payload, outcome, logged } = await ask("/yes");
    expect(outcome).toEqual({ approved: true, durationMs: expect.any(Number) });
    const [got] = at("/yes").slice(before);
    expect(got).toBeDefined();
    expect(got!.headers["content-type"]).toBe("application/json");
    const headers = Object.fromEntries(Object.entries(got!.headers).filter(([, v]) => typeof v === "string")) as Record<string, string>;
    // As a receiver would: the standardwebhooks library, the secret shown once, the raw body.
    const verified = new Webhook(secret).verify(got!.body, headers);
    expect(verified).toEqual({
      type: "sponsorship.approval",
      id: payload.id,
      createdAt: expect.any(Number),
      livemode: false,
      policy: policy.id,
      rule: row.id,
      player: request.playerId,
      account: { id: request.account.id, address: request.account.address },
      chainId: 31337,
      calls: [{ to: "0x00000000000000000000000000000000000000aa", contract: "con_registered", functionName: "deposit", data: "0xd0e30db0", value: "1000000000000000" }],
      maxCost: "1000000000000000",
      maxCostUsd: "2.500000",
      source: "transaction_intent",
      userOperationHash: request.userOperationHash,
    });
    expect(payload.id).toMatch(/^msg_/);
    expect(headers["webhook-id"]).toBe(payload.id);
    expect(Math.abs(Number(headers["webhook-timestamp"]) - Date.now() / 1000)).toBeLessThan(30);
    expect(() => new Webhook(secret).verify(got!.body.replace('"chainId":31337', '"chainId":1'), headers)).toThrow();
    expect(() => new Webhook(newApprovalSecret()).verify(got!.body, headers)).toThrow();
    // In the delivery log with status, duration and answer, under the message id sent as webhook-id.
    expect(logged).toMatchObject({ topic: "sponsorship.approval", status: "success", responseStatus: 200, responseBody: '{"sponsor":true}', error: null, messageId: payload.id, url: `${base}/yes`, target: row.id });
    expect(logged.durationMs).toBe(outcome.durationMs);
  });

  it("no: declined with the server's reason (control characters out), logged as a delivered answer", async () => {
    const { outcome, logged } = await ask("/no");
    expect(outcome).toEqual({ approved: false, reason: "player is on the block list", durationMs: expect.any(Number) });
    expect(logged).toMatchObject({ status: "success", responseStatus: 200, error: null });
    expect(JSON.parse(logged.responseBody!)).toMatchObject({ sponsor: false });
  });

  it("too slow: after the rule's timeout (not the server's delay) it is an error, and onError decides both ways", async () => {
    for (const onError of ["sponsor", "decline"] as const) {
      for (const path of ["/slow", "/drip"]) {
        const { outcome, logged } = await ask(path, { onError, timeoutMs: SHORT });
        expect(outcome, `${path} ${onError}`).toMatchObject({ approved: onError === "sponsor", error: "no answer within 300 ms" });
        expect(outcome.reason).toBeUndefined();
        expect(outcome.durationMs).toBeGreaterThanOrEqual(SHORT - 50);
        // Given up before the server's answer went out: the rule's timeout, not the server's delay, ended it.
        expect(heldBack.at(-1)!.sent).toBe(false);
        expect(logged).toMatchObject({ status: "failed", error: `no answer within 300 ms; ${onError === "sponsor" ? "sponsored" : "declined"} (onError: ${onError})` });
        // The drip's status came before its body: the log keeps it.
        expect(logged.responseStatus).toBe(path === "/drip" ? 200 : null);
      }
    }
  });

  it("not at all (connection refused): an error, onError decides both ways", async () => {
    for (const onError of ["sponsor", "decline"] as const) {
      const { outcome, logged } = await ask("", { onError, url: `http://127.0.0.1:${closedPort}/approve` });
      expect(outcome).toMatchObject({ approved: onError === "sponsor", error: expect.stringMatching(/^could not connect: .*ECONNREFUSED/) });
      expect(logged).toMatchObject({ status: "failed", responseStatus: null, responseBody: null });
    }
  });

  it("an answer that is not {sponsor: boolean}, not 2xx, or too large is an error, whatever its body says", async () => {
    const cases: [string, number, RegExp][] = [
      ["/not-json", 200, /^its answer is not \{"sponsor"/],
      ["/wrong-shape", 200, /^its answer is not \{"sponsor"/],
      ["/error", 500, /^answered 500$/],
      ["/redirect", 302, /^answered 302$/],
      ["/huge", 200, new RegExp(`^its answer is larger than ${APPROVAL_ANSWER_MAX_BYTES} bytes$`)],
    ];
    const yes = at("/yes").length;
    for (const [path, status, error] of cases) {
      const declined = await ask(path, { onError: "decline" });
      expect(declined.outcome, path).toMatchObject({ approved: false, error: expect.stringMatching(error) });
      expect(declined.logged, path).toMatchObject({ status: "failed", responseStatus: status });
      // The log keeps the start of the answer only.
      expect(Buffer.byteLength(declined.logged.responseBody ?? ""), path).toBeLessThanOrEqual(1024);
      const sponsored = await ask(path, { onError: "sponsor" });
      expect(sponsored.outcome, path).toMatchObject({ approved: true, error: expect.stringMatching(error) });
    }
    // The redirect was not followed.
    expect(at("/yes").length).toBe(yes);
  });

  it("a refused address is not connected to: loopback on a server reachable from elsewhere, http in live mode, the metadata endpoint", async () => {
    vi.stubEnv("HOST", "0.0.0.0");
    vi.stubEnv("OUTBOUND_ALLOW_PRIVATE", "");
    const before = { connections, received: received.length };
    const loopback = await ask("/yes", { onError: "sponsor" });
    expect(loopback.outcome).toMatchObject({ approved: true, error: expect.stringMatching(/^refused: 127\.0\.0\.1 is a loopback address/) });
    expect(loopback.logged).toMatchObject({ status: "failed", responseStatus: null });
    vi.unstubAllEnvs();
    // Nothing else may connect either: every outgoing socket is stopped and recorded.
    const aimed: unknown[] = [];
    vi.spyOn(net.Socket.prototype, "connect").mockImplementation(function (this: net.Socket, ...args: unknown[]) {
      aimed.push(args[0]);
      process.nextTick(() => this.destroy(new Error("connection stopped by the test")));
      return this;
    });
    const metadata = await ask("", { url: "http://169.254.169.254/latest/meta-data/" });
    expect(metadata.outcome).toMatchObject({ approved: false, error: expect.stringMatching(/^refused: .*metadata/) });
    const { row } = await rule("", { url: "http://hooks.example.com/approve" });
    const live = await askApproval(db, { projectId: project.id, livemode: true }, row, approvalPayload({ projectId: project.id, livemode: true }, policy, row, request));
    expect(live).toMatchObject({ approved: false, error: "refused: live mode requires an https URL" });
    expect(aimed).toEqual([]);
    await new Promise((r) => setTimeout(r, 50));
    expect({ connections, received: received.length }).toEqual(before);
  });

  it("a rule without a secret or url is not asked (an error, never an unsigned call)", async () => {
    const { row } = await rule("/yes", { onError: "decline" });
    const before = at("/yes").length;
    const outcome = await askApproval(db, ctx(), { ...row, encryptedSecret: null }, approvalPayload(ctx(), policy, row, request));
    expect(outcome).toMatchObject({ approved: false, error: "the rule has no signing secret" });
    // A secret sealed to another rule does not open for this one.
    const moved = await askApproval(db, ctx(), { ...row, encryptedSecret: sealApprovalSecret(newApprovalSecret(), "afu_other") }, approvalPayload(ctx(), policy, row, request));
    expect(moved).toMatchObject({ approved: false, error: "its signing secret could not be opened" });
    expect(at("/yes").length).toBe(before);
  });
});

describe("approveSponsorship: every approval rule of the policy, in order", () => {
  async function separatePolicy() {
    const created = await call("POST", "/v1/policies", { key, json: { name: "ordered", chainId: 31337, strategy: { sponsorSchema: "pay_for_user" } } });
    return getPolicy(db, ctx(), created.body.id);
  }
  async function ruleOf(owner: PolicyRow, path: string, onError: "sponsor" | "decline" = "decline", timeoutMs = path === "/slow" ? SHORT : 2000): Promise<PolicyRuleRow> {
    const id = newId("policyRule");
    const [row] = await db
      .insert(policyRules)
      .values({ id, ...ctx(), policyId: owner.id, type: "approval_webhook", url: `${base}${path}`, timeoutMs, onError, encryptedSecret: sealApprovalSecret(newApprovalSecret(), id) })
      .returning();
    return row!;
  }
  const declineOf = async (work: Promise<unknown>) => {
    const err = await work.then(
      () => null,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(SponsorshipDeclined);
    return err as SponsorshipDeclined;
  };

  it("all say yes (other rule types are not asked): each outcome", async () => {
    const owner = await separatePolicy();
    const [a, b] = [await ruleOf(owner, "/yes"), await ruleOf(owner, "/slow", "sponsor")];
    const budget = { ...a, id: "afu_budget", type: "budget" as const };
    const outcomes = await approveSponsorship(db, ctx(), owner, [budget, a, b], request);
    expect(outcomes.map((o) => [o.rule, o.approved, o.error ?? null])).toEqual([
      [a.id, true, null],
      [b.id, true, "no answer within 300 ms"],
    ]);
    expect((await logOf("afu_budget")).length).toBe(0);
  });

  it("the first that says no throws 402 webhook_declined naming policy, rule and reason; later rules are not asked", async () => {
    const owner = await separatePolicy();
    const rules = [await ruleOf(owner, "/yes"), await ruleOf(owner, "/no"), await ruleOf(owner, "/yes")];
    const err = await declineOf(approveSponsorship(db, ctx(), owner, rules, request));
    expect(err.status).toBe(402);
    expect(err.toJSON()).toEqual({
      error: {
        type: "sponsorship_declined",
        code: "webhook_declined",
        message: `Approval webhook rule ${rules[1]!.id} of policy ${owner.id} declined to sponsor this operation: player is on the block list.`,
        details: { policy: owner.id, rule: rules[1]!.id, reason: "player is on the block list" },
      },
    });
    expect((await logOf(rules[0]!.id)).length).toBe(1);
    expect((await logOf(rules[1]!.id)).length).toBe(1);
    expect((await logOf(rules[2]!.id)).length).toBe(0);
  });

  it("a rule that cannot be asked declines with onError decline, and says why", async () => {
    const owner = await separatePolicy();
    const rules = [await ruleOf(owner, "/slow", "sponsor"), await ruleOf(owner, "/slow", "decline")];
    const err = await declineOf(approveSponsorship(db, ctx(), owner, rules, request));
    expect(err.code).toBe("webhook_declined");
    expect(err.message).toBe(`Approval webhook rule ${rules[1]!.id} of policy ${owner.id} could not be asked (no answer within 300 ms), and its onError is decline.`);
    expect(err.toJSON().error.details).toEqual({ policy: owner.id, rule: rules[1]!.id, error: "no answer within 300 ms" });
  });

  it("each call is in the delivery log the dashboard reads (filtered by its rule), with its answer; it is not redelivered", async () => {
    const owner = await separatePolicy();
    const rules = [await ruleOf(owner, "/yes"), await ruleOf(owner, "/no")];
    await declineOf(approveSponsorship(db, ctx(), owner, rules, request));
    const list = (await call("GET", "/v1/subscriptions/logs", { key, query: { object: rules[1]!.id } })).body;
    expect(list.total).toBe(1);
    expect(list.data[0]).toMatchObject({ object: "log", topic: "sponsorship.approval", status: "success", relatedObject: rules[1]!.id, url: `${base}/no`, responseStatus: 200, error: null, trigger: null });
    expect(list.data[0].event).toMatch(/^msg_/);
    const one = (await call("GET", `/v1/subscriptions/logs/${list.data[0].id}`, { key })).body;
    expect(JSON.parse(one.responseBody)).toEqual({ sponsor: false, reason: "player is on the\r\nblock list", extra: 1 });
    const before = at("/no").length;
    expectError(await call("POST", `/v1/subscriptions/logs/${list.data[0].id}/redeliver`, { key }), 409);
    expect(at("/no").length).toBe(before);
    // The other mode sees none of it.
    expect((await call("GET", "/v1/subscriptions/logs", { key: project.keys.live.secret, query: { object: rules[1]!.id } })).body.total).toBe(0);
  });
});
