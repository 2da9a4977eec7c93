import Openfort from "@openfort/openfort-node";
import { eq, sql } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { getDb } from "@/lib/db/client";
import { triggers } from "@/lib/db/schema";
import { openSigningSecret } from "@/lib/deliveries/signing";
import type { ProjectWithKeys } from "@/lib/projects/service";
import { call, expectError, newProject } from "./helpers/api";
import { triggerRow } from "./helpers/delivery-fixtures";
import { routeServer } from "./helpers/sdk-server";

let project: ProjectWithKeys;
let key: string;
const hook = "http://127.0.0.1:9/hook";

beforeAll(async () => {
  await getDb();
  project = await newProject("subscriptions");
  key = project.keys.test.secret;
});

describe("subscriptions API", () => {
  it("creates a subscription with its triggers (JSON), each trigger's secret shown once and stored sealed to it", async () => {
    const res = await call("POST", "/v1/subscriptions", {
      key,
      json: { topic: "transaction_intent.successful", triggers: [{ target: `${hook}/a`, type: "webhook" }, { target: `${hook}/b`, type: "webhook" }] },
    });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    const sub = res.body;
    expect(sub).toMatchObject({ object: "subscription", topic: "transaction_intent.successful" });
    expect(sub.id).toMatch(/^sub_/);
    expect(sub.triggers.map((t: { target: string }) => t.target)).toEqual([`${hook}/a`, `${hook}/b`]);
    for (const t of sub.triggers) {
      expect(t).toMatchObject({ object: "trigger", type: "webhook", subscription: sub.id, status: "enabled", failingSince: null, disabledAt: null, disabledReason: null });
      expect(t.id).toMatch(/^tri_/);
      expect(t.secret).toMatch(/^whsec_/);
      expect(openSigningSecret((await triggerRow(t.id)).encryptedSecret, t.id)).toBe(t.secret);
    }
    // Never again.
    const got = await call("GET", `/v1/subscriptions/${sub.id}`, { key });
    expect(got.status).toBe(200);
    expect(got.body.triggers.map((t: { id: string }) => t.id)).toEqual(sub.triggers.map((t: { id: string }) => t.id));
    expect(JSON.stringify(got.body)).not.toContain("whsec_");
    const listed = await call("GET", `/v1/subscriptions/${sub.id}/triggers`, { key });
    expect(JSON.stringify(listed.body)).not.toContain("whsec_");
  });

  it("creates one from a form body in bracket notation", async () => {
    const res = await call("POST", "/v1/subscriptions", { key, form: "topic=test&triggers[0][target]=http%3A%2F%2F127.0.0.1%3A9%2Fform&triggers[0][type]=webhook" });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.topic).toBe("test");
    expect(res.body.triggers).toHaveLength(1);
    expect(res.body.triggers[0]).toMatchObject({ target: "http://127.0.0.1:9/form", type: "webhook" });
    const trigger = await call("POST", `/v1/subscriptions/${res.body.id}/triggers`, { key, form: { target: `${hook}/form2`, type: "webhook", subscription: res.body.id } });
    expect(trigger.status, JSON.stringify(trigger.body)).toBe(200);
    expect(trigger.body.secret).toMatch(/^whsec_/);
  });

  it("refuses bad input with a 400 naming the parameter, in JSON and in forms", async () => {
    const bad = async (body: { json?: unknown; form?: string }, param: string, livemode = false) => {
      const res = await call("POST", "/v1/subscriptions", { key: livemode ? project.keys.live.secret : key, ...body });
      const error = expectError(res, 400, "invalid_request_error");
      expect(Object.keys(error.details ?? {}), `${JSON.stringify(body)}: ${error.message}`).toContain(param);
      return error;
    };
    const ok = { target: `${hook}/x`, type: "webhook" };
    await bad({ json: { topic: "transaction_intent.successful" } }, "triggers");
    await bad({ json: { topic: "transaction_intent.successful", triggers: [] } }, "triggers");
    await bad({ form: "topic=test" }, "triggers");
    await bad({ json: { triggers: [ok] } }, "topic");
    await bad({ json: { topic: "transaction_intent.exploded", triggers: [ok] } }, "topic");
    await bad({ json: { topic: "test", triggers: [{ target: "", type: "webhook" }] } }, "triggers[0][target]");
    await bad({ form: "topic=test&triggers[0][target]=&triggers[0][type]=webhook" }, "triggers[0][target]");
    await bad({ json: { topic: "test", triggers: [ok, { target: "not a url", type: "webhook" }] } }, "triggers[1][target]");
    await bad({ json: { topic: "test", triggers: [{ target: `${hook}/x`, type: "sms" }] } }, "triggers[0][type]");
    await bad({ json: { topic: "test", triggers: [{ target: `${hook}/x` }] } }, "triggers[0][type]");
    const email = await bad({ json: { topic: "test", triggers: [{ target: "someone@example.com", type: "email" }] } }, "triggers[0][type]");
    expect(email.message).toMatch(/not supported/);
    await bad({ json: { topic: "test", triggers: Array.from({ length: 11 }, () => ok) } }, "triggers");
    await bad({ json: { topic: "test", triggers: [{ ...ok, subscription: "sub_x" }] } }, "triggers[0][subscription]");
    await bad({ json: { topic: "test", triggers: [ok], extra: 1 } }, "extra");
    // Live keys: https only, and public addresses only.
    const http = await bad({ json: { topic: "test", triggers: [{ target: "http://example.com/hook", type: "webhook" }] } }, "triggers[0][target]", true);
    expect(http.message).toMatch(/https/);
    const local = await bad({ json: { topic: "test", triggers: [{ target: "https://127.0.0.1/hook", type: "webhook" }] } }, "triggers[0][target]", true);
    expect(local.message).toMatch(/127\.0\.0\.1/);
    await bad({ json: { topic: "test", triggers: [{ target: "https://10.1.2.3/hook", type: "webhook" }] } }, "triggers[0][target]", true);
    await bad({ form: "topic=test&triggers[0][target]=https%3A%2F%2F192.168.1.1%2F&triggers[0][type]=webhook" }, "triggers[0][target]", true);
    // Nothing was made by any of those.
    const live = await call("GET", "/v1/subscriptions", { key: project.keys.live.secret });
    expect(live.body.total).toBe(0);
  });

  it("lists newest first (default 10, paginated, by topic), gets, deletes (soft, with its triggers), each scoped to the project and mode", async () => {
    const p = await newProject("subscriptions list");
    const k = p.keys.test.secret;
    const made: string[] = [];
    for (let i = 0; i < 12; i++) {
      const topic = i % 3 === 0 ? "transaction_intent.failed" : "transaction_intent.broadcast";
      const res = await call("POST", "/v1/subscriptions", { key: k, json: { topic, triggers: [{ target: `${hook}/${i}`, type: "webhook" }] } });
      made.push(res.body.id);
    }
    const first = await call("GET", "/v1/subscriptions", { key: k });
    expect(first.body).toMatchObject({ object: "list", url: "/v1/subscriptions", start: 0, end: 10, total: 12 });
    expect(first.body.data.map((s: { id: string }) => s.id)).toEqual([...made].reverse().slice(0, 10));
    const page = await call("GET", "/v1/subscriptions", { key: k, query: { limit: 5, skip: 10, order: "asc" } });
    expect(page.body.data.map((s: { id: string }) => s.id)).toEqual(made.slice(10));
    const failed = await call("GET", "/v1/subscriptions", { key: k, query: { topic: "transaction_intent.failed" } });
    expect(failed.body.total).toBe(4);
    expectError(await call("GET", "/v1/subscriptions", { key: k, query: { topic: "nope" } }), 400);
    expectError(await call("GET", "/v1/subscriptions", { key: k, query: { limit: 0 } }), 400);

    // Another project, or the other mode, sees none of them.
    const other = await newProject("subscriptions elsewhere");
    for (const outsider of [other.keys.test.secret, p.keys.live.secret]) {
      expectError(await call("GET", `/v1/subscriptions/${made[0]}`, { key: outsider }), 404);
      expectError(await call("DELETE", `/v1/subscriptions/${made[0]}`, { key: outsider }), 404);
      expectError(await call("GET", `/v1/subscriptions/${made[0]}/triggers`, { key: outsider }), 404);
      expectError(await call("POST", `/v1/subscriptions/${made[0]}/triggers`, { key: outsider, json: { target: `${hook}/o`, type: "webhook" } }), 404);
      expect((await call("GET", "/v1/subscriptions", { key: outsider })).body.total).toBe(0);
    }

    const sub = (await call("GET", `/v1/subscriptions/${made[0]}`, { key: k })).body;
    const del = await call("DELETE", `/v1/subscriptions/${made[0]}`, { key: k });
    expect(del.body).toEqual({ id: made[0], object: "subscription", deleted: true });
    expect((await call("DELETE", `/v1/subscriptions/${made[0]}`, { key: k })).body).toEqual(del.body);
    expectError(await call("GET", `/v1/subscriptions/${made[0]}`, { key: k }), 404);
    expectError(await call("GET", `/v1/subscriptions/${made[0]}/triggers/${sub.triggers[0].id}`, { key: k }), 404);
    expect((await triggerRow(sub.triggers[0].id)).deletedAt).not.toBeNull();
    expect((await call("GET", "/v1/subscriptions", { key: k })).body.total).toBe(11);
    expectError(await call("GET", "/v1/subscriptions/sub_missing", { key: k }), 404);
  });

  it("manages a subscription's triggers: create (subscription must match the path), list, get, delete, enable", async () => {
    const sub = (await call("POST", "/v1/subscriptions", { key, json: { topic: "balance.project", triggers: [{ target: `${hook}/t0`, type: "webhook" }] } })).body;
    const base = `/v1/subscriptions/${sub.id}/triggers`;
    const mismatch = expectError(await call("POST", base, { key, json: { target: `${hook}/t1`, type: "webhook", subscription: "sub_other" } }), 400);
    expect(Object.keys(mismatch.details!)).toEqual(["subscription"]);
    expectError(await call("POST", base, { key, json: { target: "", type: "webhook" } }), 400);
    expect(Object.keys(expectError(await call("POST", base, { key, json: { target: `${hook}/t1`, type: "email" } }), 400).details!)).toEqual(["type"]);
    expect(Object.keys(expectError(await call("POST", base, { key: key, json: { target: "ftp://x", type: "webhook" } }), 400).details!)).toEqual(["target"]);

    const added: string[] = [sub.triggers[0].id];
    for (let i = 1; i < 10; i++) {
      const res = await call("POST", base, { key, json: { target: `${hook}/t${i}`, type: "webhook", ...(i === 1 ? { subscription: sub.id } : {}) } });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      expect(res.body).toMatchObject({ object: "trigger", subscription: sub.id, target: `${hook}/t${i}`, status: "enabled" });
      added.push(res.body.id);
    }
    // Ten is the most.
    expectError(await call("POST", base, { key, json: { target: `${hook}/t10`, type: "webhook" } }), 400);
    const list = await call("GET", base, { key });
    expect(list.body).toMatchObject({ object: "list", total: 10, end: 10 });
    expect(list.body.data.map((t: { id: string }) => t.id)).toEqual([...added].reverse());
    expect((await call("GET", base, { key, query: { limit: 2, skip: 1 } })).body.data.map((t: { id: string }) => t.id)).toEqual([added[8], added[7]]);

    const one = await call("GET", `${base}/${added[3]}`, { key });
    expect(one.body).toMatchObject({ id: added[3], target: `${hook}/t3` });
    expect(one.body.secret).toBeUndefined();
    expect((await call("DELETE", `${base}/${added[3]}`, { key })).body).toEqual({ id: added[3], object: "trigger", deleted: true });
    expectError(await call("GET", `${base}/${added[3]}`, { key }), 404);
    expectError(await call("DELETE", `${base}/${added[3]}`, { key }), 404);
    expect((await call("GET", base, { key })).body.total).toBe(9);
    // A trigger under another subscription's path is not found.
    const another = (await call("POST", "/v1/subscriptions", { key, json: { topic: "test", triggers: [{ target: `${hook}/z`, type: "webhook" }] } })).body;
    expectError(await call("GET", `/v1/subscriptions/${another.id}/triggers/${added[0]}`, { key }), 404);

    // Enable: clears what the delivery health set.
    const db = await getDb();
    await db.update(triggers).set({ failingSince: sql`now() - interval '3 days'`, disabledAt: sql`now()`, disabledReason: "every delivery failed for 3 days" }).where(eq(triggers.id, added[0]!));
    const disabled = await call("GET", `${base}/${added[0]}`, { key });
    expect(disabled.body).toMatchObject({ status: "disabled", disabledReason: "every delivery failed for 3 days" });
    expect(disabled.body.disabledAt).toBeTypeOf("number");
    expect(disabled.body.failingSince).toBeLessThan(disabled.body.disabledAt);
    const enabled = await call("POST", `${base}/${added[0]}/enable`, { key });
    expect(enabled.body).toMatchObject({ id: added[0], status: "enabled", failingSince: null, disabledAt: null, disabledReason: null });
  });

  it("validates the log filters", async () => {
    for (const [param, value] of [["status", "ok"], ["topic", "nope"], ["limit", "x"], ["order", "up"], ["bogus", "1"]] as const) {
      const error = expectError(await call("GET", "/v1/subscriptions/logs", { key, query: { [param]: value } }), 400);
      expect(Object.keys(error.details ?? {})).toContain(param);
    }
    const empty = await call("GET", "/v1/subscriptions/logs", { key, query: { status: "failed", topic: "test", requestID: "req_none" } });
    expect(empty.body).toMatchObject({ object: "list", total: 0, data: [] });
    expectError(await call("GET", "/v1/subscriptions/logs/eve_missing", { key }), 404);
    expectError(await call("POST", "/v1/subscriptions/logs/eve_missing/redeliver", { key }), 404);
  });
});

describe("the official SDK", () => {
  let server: Awaited<ReturnType<typeof routeServer>>;
  beforeAll(async () => {
    server = await routeServer();
  });
  afterAll(() => server?.close());

  it("subscriptions.create, list, get, delete and the generated SubscriptionsApi's trigger, test and log calls work unchanged", async () => {
    const p = await newProject("subscriptions sdk");
    const k = p.keys.test.secret;
    const openfort = new Openfort(k, server.url);
    // The SDK 0.6.78 types subscription answers with its billing SubscriptionResponse, so what it
    // hands back has none of our fields; the request still works, as the API shows.
    await openfort.subscriptions.create({ topic: "transaction_intent.successful", triggers: [{ target: `${hook}/sdk`, type: "webhook" }] });
    const listed = await call("GET", "/v1/subscriptions", { key: k });
    expect(listed.body.total).toBe(1);
    const sub = listed.body.data[0];
    expect(sub.triggers[0].target).toBe(`${hook}/sdk`);
    const sdkList = await openfort.subscriptions.list();
    expect(sdkList.total).toBe(1);
    expect(sdkList.data).toHaveLength(1);
    // What the SDK makes of our answer (its billing type): none of the subscription's fields.
    expect((await openfort.subscriptions.get({ id: sub.id })) as unknown as Record<string, unknown>).not.toHaveProperty("id");

    // The wrapper exposes only those four; the generated API under it has the rest.
    const api = (openfort.subscriptions as unknown as { api: Record<string, (...args: unknown[]) => Promise<any>> }).api;
    const trigger = await api.createTrigger!(sub.id, { target: `${hook}/sdk2`, type: "webhook", subscription: sub.id });
    expect(trigger).toMatchObject({ object: "trigger", subscription: sub.id, target: `${hook}/sdk2`, type: "webhook" });
    expect(trigger.id).toMatch(/^tri_/);
    const sdkTriggers = await api.getTriggers!(sub.id);
    expect(sdkTriggers.total).toBe(2);
    expect(sdkTriggers.data[0].id).toBe(trigger.id);
    expect((await api.getTrigger!(sub.id, trigger.id)).target).toBe(`${hook}/sdk2`);
    // No body: every trigger on the test topic; this project has none.
    expect(await api.testTrigger!()).toMatchObject({ sent: false });
    const logs = await api.listSubscriptionLogs!(10, 0, "desc", "test", "failed");
    expect(logs.total).toBe(0);
    expect((await api.deleteTrigger!(sub.id, trigger.id)).deleted).toBe(true);
    const deleted = await openfort.subscriptions.delete(sub.id);
    expect(deleted).toMatchObject({ id: sub.id, object: "subscription", deleted: true });
    expect((await call("GET", "/v1/subscriptions", { key: k })).body.total).toBe(0);
  });
});
