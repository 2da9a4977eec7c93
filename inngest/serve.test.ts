import crypto from "node:crypto";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { deliveryJob } from "@/lib/jobs/messages";
import { functions as allFunctions } from "@/inngest/functions";
import { webhookSignature } from "@/lib/deliveries/signing";
import { expectError } from "@/test/helpers/api";
import { receiver, type ReceivedRequest } from "@/test/helpers/relay-fixtures";

/**
 * /api/inngest as Inngest sees it. Inngest itself cannot run here (inngest-cli downloads a binary
 * at install), so the test plays its part at the boundary: it signs and sends the requests Inngest
 * sends, and a local HTTP server stands in for Inngest's event API. Everything behind the route
 * (functions, database, chain, webhook receiver) is real.
 */

const INNGEST_VARS = ["INNGEST_EVENT_KEY", "INNGEST_SIGNING_KEY", "INNGEST_SIGNING_KEY_FALLBACK", "INNGEST_DEV", "INNGEST_BASE_URL", "INNGEST_API_BASE_URL", "INNGEST_EVENT_API_BASE_URL"];
const saved = Object.fromEntries(INNGEST_VARS.map((name) => [name, process.env[name]]));
const restoreEnv = () => {
  for (const name of INNGEST_VARS) {
    if (saved[name] === undefined) delete process.env[name];
    else process.env[name] = saved[name];
  }
};

const SIGNING_KEY = `signkey-test-${crypto.randomBytes(32).toString("hex")}`;
const EVENT_KEY = `evt-${crypto.randomBytes(16).toString("hex")}`;
const APP_URL = "http://127.0.0.1:3000/api/inngest";
const RELAY_FN = "smart-wallet-service-relay-transaction-intents";
const RELAY_ALONE_FN = "smart-wallet-service-relay-transaction-intent";
const WEBHOOK_FN = "smart-wallet-service-deliver-event";
const EXPIRE_FN = "smart-wallet-service-cancel-unsigned-intent";
const UNSETTLED_FN = "smart-wallet-service-resend-unsettled-intents";
const MONITOR_FN = "smart-wallet-service-monitor-balances";
const INDEX_FN = "smart-wallet-service-index-token-transfers";
const RETENTION_FN = "smart-wallet-service-purge-expired-rows";
const SPONSORSHIP_FN = "smart-wallet-service-watch-sponsorship";
const RECONCILE_FN = "smart-wallet-service-reconcile-sponsorship";

type Route = typeof import("@/app/api/inngest/route");
type Method = "GET" | "PUT" | "POST";

/** The route module as a fresh process would load it, with the environment as it is now. */
async function freshRoute(): Promise<Route> {
  vi.resetModules();
  return import("@/app/api/inngest/route");
}

/** JSON with its object keys sorted (RFC 8785 for our plain values): what the SDK's signature check canonicalizes a body to. */
function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(",")}]`;
  if (value && typeof value === "object") {
    const entries = Object.entries(value).filter(([, v]) => v !== undefined).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonical(v)}`).join(",")}}`;
  }
  return JSON.stringify(value);
}

/**
 * Inngest's request signature: `t=<unix seconds>&s=<hex HMAC-SHA256 of body + t>`, keyed by the
 * signing key with its `signkey-<env>-` prefix removed (the rest used as text, not hex-decoded).
 */
function signature(body: string, { key = SIGNING_KEY, at = Math.floor(Date.now() / 1000) } = {}) {
  const s = crypto.createHmac("sha256", key.replace(/^signkey-\w+-/, "")).update(body + String(at)).digest("hex");
  return `t=${at}&s=${s}`;
}

interface Sent {
  method: Method;
  query?: Record<string, string>;
  body?: unknown;
  /** A signature header of the test's choosing; by default the body is signed with SIGNING_KEY. */
  sign?: string | null;
  headers?: Record<string, string>;
}

async function send(route: Route, { method, query = {}, body, sign, headers = {} }: Sent) {
  const url = new URL(APP_URL);
  for (const [name, value] of Object.entries(query)) url.searchParams.set(name, value);
  const text = body === undefined ? "" : canonical(body);
  const all = new Headers(headers);
  if (text) all.set("content-type", "application/json");
  const sig = sign === undefined ? signature(text) : sign;
  if (sig !== null) all.set("x-inngest-signature", sig);
  const response = await route[method](new Request(url, { method, headers: all, body: text || undefined }), { params: Promise.resolve({}) });
  const raw = await response.text();
  return { status: response.status, headers: response.headers, raw, body: raw ? JSON.parse(raw) : null };
}

/** Inngest checks the SDK's answers too: signed with the same key over the raw response body. */
function expectSignedResponse(res: { headers: Headers; raw: string }) {
  const header = res.headers.get("x-inngest-signature");
  expect(header).toMatch(/^t=\d+&s=[0-9a-f]{64}$/);
  const at = Number(new URLSearchParams(header!).get("t"));
  expect(header).toBe(signature(res.raw, { at }));
}

interface Event {
  name: string;
  data: Record<string, unknown>;
  id: string;
  ts?: number;
}

/** The body of Inngest's call to run a function: the event, the stored step results so far, in order. */
function invocation(runId: string, event: Event, done: [string, unknown][] = []) {
  return {
    ctx: { attempt: 0, disable_immediate_execution: false, run_id: runId, stack: { current: done.length, stack: done.map(([id]) => id) }, use_api: false },
    event,
    events: [event],
    steps: Object.fromEntries(done.map(([id, data]) => [id, { data }])),
    version: -1,
  };
}

describe("/api/inngest without INNGEST_* configuration", () => {
  beforeAll(() => {
    for (const name of INNGEST_VARS) delete process.env[name];
  });
  afterAll(restoreEnv);

  it("answers a JSON 404 to every method: the functions run in-process", async () => {
    const route = await freshRoute();
    for (const method of ["GET", "PUT", "POST"] as const) {
      const res = await send(route, { method, query: { fnId: RELAY_FN, stepId: "step" }, body: method === "GET" ? undefined : { url: APP_URL } });
      expect(res.headers.get("content-type")).toMatch(/application\/json/);
      expect(expectError(res, 404, "invalid_request_error").message).toMatch(/INNGEST_EVENT_KEY/);
    }
  });
});

describe("/api/inngest with INNGEST_SIGNING_KEY and INNGEST_EVENT_KEY set", () => {
  let route: Route;
  let fixtures: typeof import("@/test/helpers/relay-fixtures");
  let api: typeof import("@/test/helpers/api");
  let runner: typeof import("@/inngest/runner");
  let key: string;
  let projectId: string;
  let deposits: Awaited<ReturnType<(typeof import("@/test/helpers/relay-fixtures"))["sponsoredDeposits"]>>;
  let hooks: Awaited<ReturnType<typeof receiver>>;
  let inngestEvents: Awaited<ReturnType<typeof receiver>>;

  /** The events Inngest's event API (the stand-in) received. */
  const eventsSent = () => inngestEvents.received.flatMap((r: ReceivedRequest) => JSON.parse(r.body) as Event[]);

  beforeAll(async () => {
    inngestEvents = await receiver((req) =>
      req.method === "POST" && req.path === `/e/${EVENT_KEY}` ? { status: 200, body: JSON.stringify({ ids: (JSON.parse(req.body) as unknown[]).map(() => crypto.randomUUID()), status: 200 }) } : { status: 404, body: "{}" },
    );
    for (const name of INNGEST_VARS) delete process.env[name];
    process.env.INNGEST_SIGNING_KEY = SIGNING_KEY;
    process.env.INNGEST_EVENT_KEY = EVENT_KEY;
    process.env.INNGEST_BASE_URL = inngestEvents.url;
    // A fresh module graph, as a process started with this environment loads it.
    route = await freshRoute();
    fixtures = await import("@/test/helpers/relay-fixtures");
    api = await import("@/test/helpers/api");
    runner = await import("@/inngest/runner");
    const project = await api.newProject("served to inngest");
    key = project.keys.test.secret;
    projectId = project.id;
    deposits = await fixtures.sponsoredDeposits(key);
    hooks = await receiver();
    await api.call("POST", "/v1/settings/webhook", { key, json: { url: `${hooks.url}/hooks` } });
  });
  afterAll(async () => {
    restoreEnv();
    vi.resetModules();
    await Promise.all([hooks?.close(), inngestEvents?.close()]);
  });

  it("answers signed introspection (GET) for our app and functions, and lists the functions on a signed in-band sync (PUT)", async () => {
    expect(await send(route, { method: "GET", sign: null })).toMatchObject({ status: 401, body: { message: "Unauthorized" } });

    const introspection = await send(route, { method: "GET" });
    expect(introspection.status).toBe(200);
    const hashed = crypto.createHash("sha256").update(Buffer.from(SIGNING_KEY.replace(/^signkey-\w+-/, ""), "hex")).digest("hex");
    expect(introspection.body).toMatchObject({
      authentication_succeeded: true,
      app_id: "smart-wallet-service",
      mode: "cloud",
      function_count: allFunctions.length,
      has_event_key: true,
      has_signing_key: true,
      signing_key_hash: hashed.slice(0, 12),
      event_api_origin: inngestEvents.url,
    });
    expectSignedResponse(introspection);

    const syncHeaders = { "x-inngest-sync-kind": "in_band" };
    expect(await send(route, { method: "PUT", body: { url: APP_URL }, headers: syncHeaders, sign: null })).toMatchObject({ status: 401 });
    expect(await send(route, { method: "PUT", body: { url: APP_URL }, headers: syncHeaders, sign: signature(canonical({ url: APP_URL }), { key: `signkey-test-${"00".repeat(32)}` }) })).toMatchObject({ status: 401 });
    const sync = await send(route, { method: "PUT", body: { url: APP_URL }, headers: syncHeaders });
    expect(sync.status).toBe(200);
    expect(sync.headers.get("x-inngest-sync-kind")).toBe("in_band");
    expect(sync.body).toMatchObject({ app_id: "smart-wallet-service", url: APP_URL, framework: "nextjs" });
    const functions = sync.body.functions as { id: string; triggers: unknown[]; steps: { step: { runtime: { url: string }; retries: { attempts: number } } } }[];
    expect(functions.map((f) => f.id).sort()).toEqual([EXPIRE_FN, WEBHOOK_FN, INDEX_FN, MONITOR_FN, RETENTION_FN, RECONCILE_FN, RELAY_ALONE_FN, RELAY_FN, UNSETTLED_FN, SPONSORSHIP_FN]);
    const byId = Object.fromEntries(functions.map((f) => [f.id, f]));
    expect(byId[RELAY_FN]!.triggers).toEqual([{ event: "transaction_intent/relay" }]);
    // Inngest gathers the relay's events into batches of up to 50, for at most a second.
    expect(byId[RELAY_FN]).toMatchObject({ batchEvents: { maxSize: 50, timeout: "1s" } });
    expect(byId[RELAY_ALONE_FN]!.triggers).toEqual([{ event: "transaction_intent/relay-alone" }]);
    expect(byId[WEBHOOK_FN]!.triggers).toEqual([{ event: "event/deliver" }]);
    expect(byId[EXPIRE_FN]!.triggers).toEqual([{ event: "transaction_intent/expire" }]);
    // Inngest runs the sweep on its own schedule: the cron goes to it as written
    expect(byId[UNSETTLED_FN]!.triggers).toEqual([{ cron: "* * * * *" }]);
    expect(byId[MONITOR_FN]!.triggers).toEqual([{ cron: "* * * * *" }]);
    expect(byId[INDEX_FN]!.triggers).toEqual([{ cron: "* * * * *" }]);
    expect(byId[RETENTION_FN]!.triggers).toEqual([{ cron: "17 * * * *" }]);
    expect(byId[SPONSORSHIP_FN]!.triggers).toEqual([{ cron: "* * * * *" }]);
    expect(byId[RECONCILE_FN]!.triggers).toEqual([{ cron: "*/5 * * * *" }]);
    for (const f of functions) {
      expect(f.steps.step.retries.attempts).toBe([UNSETTLED_FN, MONITOR_FN, INDEX_FN, RETENTION_FN, SPONSORSHIP_FN, RECONCILE_FN].includes(f.id) ? 2 : 10);
      const stepUrl = new URL(f.steps.step.runtime.url);
      expect(`${stepUrl.origin}${stepUrl.pathname}`).toBe(APP_URL);
      expect(stepUrl.searchParams.get("fnId")).toBe(f.id);
    }
    expectSignedResponse(sync);
  });

  it("sends events to Inngest, not to an in-process runner, and runs each step Inngest asks for through signed POSTs, returning its result", async () => {
    const intent = await deposits.intent();
    // The API handed the relay to Inngest; nothing runs it in this process.
    expect(runner.embeddedRunner()).toBeUndefined();
    const relay = eventsSent().find((e) => e.id === `relay:${intent.id}`);
    expect(relay).toMatchObject({ name: "transaction_intent/relay", data: { intentId: intent.id, projectId: expect.stringMatching(/^pro_/) } });
    expect(await fixtures.intentRow(intent.id)).toMatchObject({ status: "pending", response: null });

    // Inngest's first call (a batch of this one event): the SDK runs the first step, land, and answers 206 with its result.
    const runId = `run-${crypto.randomUUID()}`;
    const first = await send(route, { method: "POST", query: { fnId: RELAY_FN, stepId: "step" }, body: invocation(runId, relay!) });
    expect(first.status, first.raw).toBe(206);
    expect(first.body).toEqual([expect.objectContaining({ op: "StepRun", displayName: "land", data: { [intent.id]: "landed" } })]);
    expectSignedResponse(first);
    const landId = first.body[0].id as string;
    expect(await fixtures.intentRow(intent.id)).toMatchObject({ status: "successful", response: { status: 1 } });

    // The next call carries land's stored result: notify-broadcast runs, and queues the webhook with Inngest.
    const second = await send(route, { method: "POST", query: { fnId: RELAY_FN, stepId: "step" }, body: invocation(runId, relay!, [[landId, { [intent.id]: "landed" }]]) });
    expect(second.status, second.raw).toBe(206);
    expect(second.body).toEqual([expect.objectContaining({ op: "StepRun", displayName: "notify-broadcast", data: 1 })]);
    const webhookEvent = eventsSent().find((e) => e.name === "event/deliver" && e.data.target === "webhook" && e.id.startsWith("deliver:msg_"));
    expect(webhookEvent).toMatchObject({ name: "event/deliver", data: { messageId: expect.stringMatching(/^msg_/), target: "webhook" } });

    // Inngest then runs deliver-event for that event: its first step posts the signed webhook...
    const webhookRun = `run-${crypto.randomUUID()}`;
    const post = await send(route, { method: "POST", query: { fnId: WEBHOOK_FN, stepId: "step" }, body: invocation(webhookRun, webhookEvent!) });
    expect(post.status, post.raw).toBe(206);
    expect(post.body).toEqual([expect.objectContaining({ op: "StepRun", displayName: "attempt-1", data: expect.objectContaining({ outcome: "delivered", responseStatus: 200 }) })]);
    const delivered = hooks.received.filter((r) => JSON.parse(r.body).data.id === intent.id);
    expect(delivered).toHaveLength(1);
    expect(JSON.parse(delivered[0]!.body)).toMatchObject({ type: "transaction_intent.broadcast", data: { id: intent.id, response: { status: 1 } } });
    expect(delivered[0]!.headers["openfort-signature"]).toBe(webhookSignature(key, delivered[0]!.body));
    expect(delivered[0]!.headers["webhook-id"]).toBe(webhookEvent!.data.messageId);

    // ...and with that step's result stored, the function completes: 200 with its output.
    const done = await send(route, { method: "POST", query: { fnId: WEBHOOK_FN, stepId: "step" }, body: invocation(webhookRun, webhookEvent!, [[post.body[0].id, post.body[0].data]]) });
    expect(done.status, done.raw).toBe(200);
    expect(done.body).toMatchObject({ attempts: 1, outcome: "delivered" });
    expectSignedResponse(done);
    expect(hooks.received.filter((r) => JSON.parse(r.body).data.id === intent.id)).toHaveLength(1);
  }, 60_000);

  it("refuses invocations that are unsigned, signed with another key, stale, or altered after signing, and runs nothing for them", async () => {
    const intent = await deposits.intent();
    const { publish } = await import("@/lib/deliveries/publish");
    const { getDb } = await import("@/lib/db/client");
    const messageId = await publish(await getDb(), { projectId, livemode: false }, { topic: "transaction_intent.successful", objectId: intent.id, data: { id: intent.id }, requestId: null, dedupeKey: `${intent.id}:test-refusals` });
    const event = deliveryJob(messageId, "webhook", projectId);
    const body = invocation(`run-${crypto.randomUUID()}`, event);
    const query = { fnId: WEBHOOK_FN, stepId: "step" };
    const text = canonical(body);
    const refused = [
      null,
      "",
      "t=1&s=00",
      signature(text, { key: `signkey-test-${crypto.randomBytes(32).toString("hex")}` }),
      signature(text, { at: Math.floor(Date.now() / 1000) - 10 * 60 }),
      signature(canonical({ ...body, event: { ...event, data: { ...event.data, target: "tri_altered" } } })),
    ];
    for (const sign of refused) {
      const res = await send(route, { method: "POST", query, body, sign });
      expect(res, String(sign)).toMatchObject({ status: 401, body: { message: "Unauthorized" } });
      expect(res.headers.get("x-inngest-signature")).toBeNull();
    }
    expect(hooks.received.filter((r) => JSON.parse(r.body).data.id === intent.id)).toHaveLength(0);

    // The same request, correctly signed, runs.
    const accepted = await send(route, { method: "POST", query, body });
    expect(accepted.status, accepted.raw).toBe(206);
    expect(accepted.body).toEqual([expect.objectContaining({ displayName: "attempt-1", data: expect.objectContaining({ outcome: "delivered" }) })]);
    expect(hooks.received.filter((r) => JSON.parse(r.body).data.id === intent.id)).toHaveLength(1);
  }, 60_000);
});
