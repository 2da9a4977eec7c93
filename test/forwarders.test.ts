import { beforeAll, describe, expect, it } from "vitest";
import { serviceDeployment } from "@/lib/chain/contracts";
import type { ProjectWithKeys } from "@/lib/projects/service";
import { call, expectError, newProject } from "./helpers/api";

/**
 * Forwarder contracts (`/v1/forwarder_contracts`): a registry of the project's forwarders per mode, with the usual
 * list conventions (limit, skip, order), in JSON and form encoding. Nothing relays through them: see
 * docs/forwarder-contracts.md.
 */
describe("forwarder contracts", () => {
  let project: ProjectWithKeys;
  let key: string;
  const first = () => serviceDeployment().entryPoint;
  const second = () => serviceDeployment().paymaster;

  beforeAll(async () => {
    project = await newProject("forwarders");
    key = project.keys.test.secret;
  });

  it("creates, reads, lists (limit, skip, order), updates and deletes them, in JSON and form encoding", async () => {
    const byJson = await call("POST", "/v1/forwarder_contracts", { key, json: { address: first(), chainId: 31337, name: "main forwarder" } });
    expect(byJson.status, JSON.stringify(byJson.body)).toBe(200);
    expect(byJson.body).toEqual({ id: expect.stringMatching(/^fwd_/), object: "forwarderContract", createdAt: expect.any(Number), address: first(), chainId: 31337, name: "main forwarder" });
    expect(Math.abs(byJson.body.createdAt - Date.now() / 1000)).toBeLessThan(600);
    // Form encoding, a lower-case address (stored checksummed), no name.
    const byForm = await call("POST", "/v1/forwarder_contracts", { key, form: { address: second().toLowerCase(), chainId: "31338" } });
    expect(byForm.status, JSON.stringify(byForm.body)).toBe(200);
    expect(byForm.body).toEqual({ id: expect.stringMatching(/^fwd_/), object: "forwarderContract", createdAt: expect.any(Number), address: second(), chainId: 31338 });

    expect((await call("GET", `/v1/forwarder_contracts/${byJson.body.id}`, { key })).body).toEqual(byJson.body);

    const all = await call("GET", "/v1/forwarder_contracts", { key });
    expect(all.body).toMatchObject({ object: "list", url: "/v1/forwarder_contracts", start: 0, end: 2, total: 2 });
    expect(all.body.data.map((f: { id: string }) => f.id)).toEqual([byForm.body.id, byJson.body.id]); // newest first
    const page = await call("GET", "/v1/forwarder_contracts", { key, query: { limit: 1, skip: 1 } });
    expect(page.body).toMatchObject({ start: 1, end: 2, total: 2, data: [{ id: byJson.body.id }] });
    const asc = await call("GET", "/v1/forwarder_contracts", { key, query: { order: "asc", limit: 1 } });
    expect(asc.body).toMatchObject({ start: 0, end: 1, total: 2, data: [{ id: byJson.body.id }] });

    // Fields sent replace the stored ones; `name=` clears the name.
    const renamed = await call("POST", `/v1/forwarder_contracts/${byForm.body.id}`, { key, form: { name: "second", chainId: "31337" } });
    expect(renamed.body).toMatchObject({ id: byForm.body.id, address: second(), chainId: 31337, name: "second" });
    const moved = await call("POST", `/v1/forwarder_contracts/${byForm.body.id}`, { key, json: { address: first(), chainId: 31338 } });
    expect(moved.body).toMatchObject({ address: first(), chainId: 31338, name: "second" });
    const cleared = await call("POST", `/v1/forwarder_contracts/${byForm.body.id}`, { key, form: { name: "" } });
    expect(cleared.body).not.toHaveProperty("name");
    expect((await call("GET", `/v1/forwarder_contracts/${byForm.body.id}`, { key })).body).toMatchObject({ address: first(), chainId: 31338 });

    const deleted = await call("DELETE", `/v1/forwarder_contracts/${byForm.body.id}`, { key });
    expect(deleted.body).toEqual({ id: byForm.body.id, object: "forwarderContract", deleted: true });
    expectError(await call("GET", `/v1/forwarder_contracts/${byForm.body.id}`, { key }), 404);
    expectError(await call("DELETE", `/v1/forwarder_contracts/${byForm.body.id}`, { key }), 404);
    expect((await call("GET", "/v1/forwarder_contracts", { key })).body).toMatchObject({ total: 1, data: [{ id: byJson.body.id }] });
  });

  it("belongs to the key's project and mode", async () => {
    const own = (await call("POST", "/v1/forwarder_contracts", { key, json: { address: first(), chainId: 31337 } })).body;
    const other = await newProject("forwarders other");
    for (const k of [other.keys.test.secret, project.keys.live.secret]) {
      expectError(await call("GET", `/v1/forwarder_contracts/${own.id}`, { key: k }), 404);
      expectError(await call("POST", `/v1/forwarder_contracts/${own.id}`, { key: k, json: { name: "theirs" } }), 404);
      expectError(await call("DELETE", `/v1/forwarder_contracts/${own.id}`, { key: k }), 404);
      expect((await call("GET", "/v1/forwarder_contracts", { key: k })).body).toMatchObject({ object: "list", total: 0, data: [] });
    }
    // Untouched by those attempts.
    expect((await call("GET", `/v1/forwarder_contracts/${own.id}`, { key })).body).toEqual(own);
  });

  it("answers bad input with 400s naming the fields, and checks the key first", async () => {
    const bad = expectError(await call("POST", "/v1/forwarder_contracts", { key, json: { address: "0x12", chainId: 1 } }), 400);
    expect(Object.keys(bad.details ?? {}).sort()).toEqual(["address", "chainId"]);
    expect(expectError(await call("POST", "/v1/forwarder_contracts", { key, form: { address: first() } }), 400).details).toHaveProperty("chainId");
    expect(expectError(await call("POST", "/v1/forwarder_contracts", { key, json: { address: first(), chainId: 31337, paymaster: "x" } }), 400).details).toHaveProperty("paymaster");
    // A test key cannot name a live chain, on create or update.
    expect(expectError(await call("POST", "/v1/forwarder_contracts", { key, json: { address: first(), chainId: 31339 } }), 400).details?.chainId).toBeDefined();
    const own = (await call("POST", "/v1/forwarder_contracts", { key, form: { address: first(), chainId: "31337", name: "kept" } })).body;
    expect(expectError(await call("POST", `/v1/forwarder_contracts/${own.id}`, { key, form: { chainId: "31339" } }), 400).details?.chainId).toBeDefined();
    expect(expectError(await call("POST", `/v1/forwarder_contracts/${own.id}`, { key, json: { address: "nope" } }), 400).details).toHaveProperty("address");
    expect((await call("GET", `/v1/forwarder_contracts/${own.id}`, { key })).body).toMatchObject({ chainId: 31337, name: "kept" });
    expect(expectError(await call("GET", "/v1/forwarder_contracts", { key, query: { limit: 101 } }), 400).details).toHaveProperty("limit");
    expectError(await call("POST", "/v1/forwarder_contracts", { key: null, json: { address: first(), chainId: 31337 } }), 401);
    for (const [method, options] of [["GET", {}], ["POST", { json: { name: "x" } }], ["DELETE", {}]] as const) {
      expectError(await call(method, "/v1/forwarder_contracts/fwd_123", { key, ...options }), 404);
    }
  });
});
