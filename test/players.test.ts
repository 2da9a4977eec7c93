import { beforeAll, describe, expect, it } from "vitest";
import { call, expectError, newProject } from "./helpers/api";
import type { ProjectWithKeys } from "@/lib/projects/service";

let a: ProjectWithKeys;
let b: ProjectWithKeys;
beforeAll(async () => {
  [a, b] = await Promise.all([newProject("A"), newProject("B")]);
});

describe("players", () => {
  it("creates with a form body in bracket notation and with JSON, to the same result", async () => {
    const form = await call("POST", "/v1/players", {
      key: a.keys.test.secret,
      form: { name: "Alice", description: "d", metadata: { level: "3", team: "red" } },
    });
    expect(form.status).toBe(200);
    expect(form.body).toMatchObject({ object: "player", name: "Alice", description: "d", livemode: false, metadata: { level: "3", team: "red" }, accounts: [], transactionIntents: [] });
    expect(form.body.id).toMatch(/^pla_[0-9a-f-]{36}$/);
    expect(Number.isInteger(form.body.createdAt)).toBe(true);
    expect(Math.abs(form.body.createdAt - Date.now() / 1000)).toBeLessThan(60);

    const json = await call("POST", "/v1/players", { key: a.keys.test.secret, json: { name: "Alice", description: "d", metadata: { level: "3", team: "red" } } });
    expect(json.status).toBe(200);
    const { id: _a, createdAt: _c, ...formRest } = form.body;
    const { id: _b, createdAt: _d, ...jsonRest } = json.body;
    expect(jsonRest).toEqual(formRest);
  });

  it("gets, updates and deletes; a deleted player is gone", async () => {
    const key = a.keys.test.secret;
    const { body: created } = await call("POST", "/v1/players", { key, form: { name: "Bob" } });
    const got = await call("GET", `/v1/players/${created.id}`, { key, basic: true });
    expect(got.body).toEqual(created);
    const updated = await call("POST", `/v1/players/${created.id}`, { key, form: { name: "Robert", email: "rob@example.com" } });
    expect(updated.status).toBe(200);
    expect(updated.body).toMatchObject({ id: created.id, name: "Robert", email: "rob@example.com" });
    const deleted = await call("DELETE", `/v1/players/${created.id}`, { key });
    expect(deleted.body).toEqual({ id: created.id, object: "player", deleted: true });
    expectError(await call("GET", `/v1/players/${created.id}`, { key }), 404);
    expectError(await call("DELETE", `/v1/players/${created.id}`, { key }), 404);
  });

  it("unsets one metadata key with an empty value and all keys with an empty metadata", async () => {
    const key = a.keys.test.secret;
    const { body: p } = await call("POST", "/v1/players", { key, form: { name: "M", metadata: { a: "1", b: "2", c: "3" } } });
    let res = await call("POST", `/v1/players/${p.id}`, { key, form: "metadata[a]=&metadata[d]=4" });
    expect(res.body.metadata).toEqual({ b: "2", c: "3", d: "4" });
    res = await call("POST", `/v1/players/${p.id}`, { key, json: { metadata: { b: "" } } });
    expect(res.body.metadata).toEqual({ c: "3", d: "4" });
    res = await call("POST", `/v1/players/${p.id}`, { key, form: { name: "unchanged metadata" } });
    expect(res.body.metadata).toEqual({ c: "3", d: "4" });
    res = await call("POST", `/v1/players/${p.id}`, { key, form: "metadata=" });
    expect(res.body.metadata).toBeNull();
    res = await call("POST", `/v1/players/${p.id}`, { key, json: { metadata: { x: 1, y: true } } });
    expect(res.body.metadata).toEqual({ x: 1, y: true });
    res = await call("POST", `/v1/players/${p.id}`, { key, json: { metadata: "" } });
    expect(res.body.metadata).toBeNull();
  });

  it("paginates newest first with limit, skip and order", async () => {
    const project = await newProject();
    const key = project.keys.test.secret;
    const ids: string[] = [];
    for (let i = 0; i < 13; i++) ids.push((await call("POST", "/v1/players", { key, form: { name: `p${i}` } })).body.id);
    const first = await call("GET", "/v1/players", { key });
    expect(first.body).toMatchObject({ object: "list", url: "/v1/players", start: 0, end: 10, total: 13 });
    expect(first.body.data.map((p: { id: string }) => p.id)).toEqual(ids.slice().reverse().slice(0, 10));
    const second = await call("GET", "/v1/players", { key, query: { skip: 10, limit: 10 } });
    expect(second.body).toMatchObject({ start: 10, end: 13, total: 13 });
    expect(second.body.data.map((p: { id: string }) => p.id)).toEqual(ids.slice(0, 3).reverse());
    // Past the end the page is empty and still counts the matches.
    expect((await call("GET", "/v1/players", { key, query: { skip: 20 } })).body).toMatchObject({ start: 20, end: 20, total: 13, data: [] });
    expect((await call("GET", "/v1/players", { key, query: { name: "nobody" } })).body).toMatchObject({ start: 0, end: 0, total: 0, data: [] });
    const asc = await call("GET", "/v1/players", { key, query: { order: "asc", limit: 3 } });
    expect(asc.body.data.map((p: { id: string }) => p.id)).toEqual(ids.slice(0, 3));
    const byName = await call("GET", "/v1/players", { key, query: { name: "p7" } });
    expect(byName.body.data.map((p: { id: string }) => p.id)).toEqual([ids[7]]);
    expectError(await call("GET", "/v1/players", { key, query: { limit: 101 } }), 400);
    expectError(await call("GET", "/v1/players", { key, query: { limit: 0 } }), 400);
    expectError(await call("GET", "/v1/players", { key, query: { skip: -1 } }), 400);
    expectError(await call("GET", "/v1/players", { key, query: { order: "sideways" } }), 400);
  });

  it("filters by name and email, alone and together, each project and mode its own under the same statement", async () => {
    // The page statement is prepared once per shape (order, filters given): later calls of a shape carry only values.
    const [x, y] = await Promise.all([newProject(), newProject()]);
    const make = (key: string, name: string, email?: string) => call("POST", "/v1/players", { key, form: { name, ...(email && { email }) } }).then((r) => r.body.id as string);
    const xa = await make(x.keys.test.secret, "same", "a@example.com");
    const xb = await make(x.keys.test.secret, "same", "b@example.com");
    const xLive = await make(x.keys.live.secret, "same", "a@example.com");
    const ya = await make(y.keys.test.secret, "same", "a@example.com");
    const ids = async (key: string, query: Record<string, string | number>) => {
      const { body } = await call("GET", "/v1/players", { key, query });
      return { ids: body.data.map((p: { id: string }) => p.id), total: body.total };
    };
    for (let round = 0; round < 2; round++) {
      expect(await ids(x.keys.test.secret, { name: "same" })).toEqual({ ids: [xb, xa], total: 2 });
      expect(await ids(x.keys.test.secret, { email: "a@example.com" })).toEqual({ ids: [xa], total: 1 });
      expect(await ids(x.keys.test.secret, { name: "same", email: "b@example.com" })).toEqual({ ids: [xb], total: 1 });
      expect(await ids(x.keys.test.secret, { name: "other", email: "b@example.com" })).toEqual({ ids: [], total: 0 });
      expect(await ids(x.keys.live.secret, { name: "same", email: "a@example.com" })).toEqual({ ids: [xLive], total: 1 });
      expect(await ids(y.keys.test.secret, { name: "same", email: "a@example.com" })).toEqual({ ids: [ya], total: 1 });
      expect(await ids(y.keys.test.secret, { name: "same", order: "asc", skip: 5 })).toEqual({ ids: [], total: 1 });
      expect(await ids(x.keys.test.secret, { name: "same", order: "asc", limit: 1, skip: 1 })).toEqual({ ids: [xb], total: 2 });
    }
  });

  it("accepts expand in each notation and refuses unknown expansions", async () => {
    const key = a.keys.test.secret;
    const { body: p } = await call("POST", "/v1/players", { key, form: { name: "E", expand: ["accounts"] } });
    expect(p.accounts).toEqual([]);
    for (const query of ["expand[]=accounts", "expand[0]=accounts&expand[1]=transactionIntents", "expand=accounts,transactionIntents", "expand=accounts&expand=transactionIntents"]) {
      const res = await call("GET", `/v1/players/${p.id}?${query}`, { key });
      expect(res.status, query).toBe(200);
    }
    const bad = expectError(await call("GET", `/v1/players/${p.id}?expand[]=wallets`, { key }), 400);
    expect(Object.keys(bad.details!)).toEqual(["expand[0]"]);
  });

  it("isolates projects: another project's key sees nothing and changes nothing", async () => {
    const { body: p } = await call("POST", "/v1/players", { key: a.keys.test.secret, form: { name: "mine" } });
    const other = b.keys.test.secret;
    expectError(await call("GET", `/v1/players/${p.id}`, { key: other }), 404);
    expectError(await call("POST", `/v1/players/${p.id}`, { key: other, form: { name: "stolen" } }), 404);
    expectError(await call("DELETE", `/v1/players/${p.id}`, { key: other }), 404);
    const list = await call("GET", "/v1/players", { key: other, query: { limit: 100 } });
    expect(list.body.data.some((x: { id: string }) => x.id === p.id)).toBe(false);
    const still = await call("GET", `/v1/players/${p.id}`, { key: a.keys.test.secret });
    expect(still.body.name).toBe("mine");
  });

  it("isolates modes: test keys never see live players and the reverse", async () => {
    const { body: live } = await call("POST", "/v1/players", { key: a.keys.live.secret, form: { name: "live one" } });
    expect(live.livemode).toBe(true);
    expectError(await call("GET", `/v1/players/${live.id}`, { key: a.keys.test.secret }), 404);
    expectError(await call("POST", `/v1/players/${live.id}`, { key: a.keys.test.secret, form: { name: "x" } }), 404);
    const testList = await call("GET", "/v1/players", { key: a.keys.test.secret, query: { limit: 100 } });
    expect(testList.body.data.every((p: { livemode: boolean }) => !p.livemode)).toBe(true);
    const liveList = await call("GET", "/v1/players", { key: a.keys.live.secret, query: { limit: 100 } });
    expect(liveList.body.data.map((p: { id: string }) => p.id)).toEqual([live.id]);
  });

  it("rejects bad input field by field with 400 and details", async () => {
    const key = a.keys.test.secret;
    const cases: [unknown, string][] = [
      [{ name: "x".repeat(256) }, "name"],
      [{ name: 5 }, "name"],
      [{ email: "not-an-email" }, "email"],
      [{ description: ["a"] }, "description"],
      [{ metadata: "nope" }, "metadata"],
      [{ metadata: { ["k".repeat(41)]: "v" } }, "metadata"],
      [{ metadata: { k: "v".repeat(501) } }, "metadata[k]"],
      [{ metadata: { k: { nested: 1 } } }, "metadata[k]"],
      [{ nonsense: 1 }, "nonsense"],
    ];
    for (const [json, field] of cases) {
      const error = expectError(await call("POST", "/v1/players", { key, json }), 400, "invalid_request_error");
      expect(Object.keys(error.details ?? {}).some((k) => k.startsWith(field)), JSON.stringify(error.details)).toBe(true);
    }
    const tooMany = Object.fromEntries(Array.from({ length: 51 }, (_, i) => [`k${i}`, "v"]));
    expectError(await call("POST", "/v1/players", { key, json: { metadata: tooMany } }), 400);
    expectError(await call("POST", "/v1/players", { key, json: "{not json" }), 400);
    expectError(await call("POST", "/v1/players", { key, json: "[1,2]" }), 400);
    expectError(await call("POST", "/v1/players", { key, form: "a[b]=1&a=2" }), 400);
    expectError(await call("POST", "/v1/players", { key, form: "__proto__[x]=1" }), 400);
    expectError(await call("POST", "/v1/players", { key, raw: { body: "x", contentType: "text/plain" } }), 415);
    expectError(await call("GET", "/v1/players/pla_does-not-exist", { key }), 404);
    expectError(await call("GET", "/v1/players/'; drop table players; --", { key }), 404);
    expectError(await call("GET", "/v1/players/%E0%A4%A", { key }), 400); // not percent-decodable: refused before routing
    expectError(await call("GET", "/v1/players?limit=1e309", { key }), 400);
    expectError(await call("GET", "/v1/players?limit[a]=1", { key }), 400);
    expectError(await call("POST", "/v1/players", { key, json: { name: "\u0000" } }), 400);
    expectError(await call("POST", "/v1/players", { key, json: { metadata: { "a\u0000": "x" } } }), 400);
    expectError(await call("POST", "/v1/players", { key, form: "metadata[k]=%00" }), 400);
  });
});
