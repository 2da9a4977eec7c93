import { beforeAll, describe, expect, it } from "vitest";
import { serviceDeployment } from "@/lib/chain/contracts";
import { call, expectError, newProject } from "./api";
import type { ProjectWithKeys } from "@/lib/projects/service";

// Forwarder contracts are refused with a clear 400 (nothing would use one): see lib/forwarders/operations.ts.
describe("forwarder contracts", () => {
  let project: ProjectWithKeys;
  let key: string;
  const address = () => serviceDeployment().entryPoint;

  beforeAll(async () => {
    project = await newProject("forwarders");
    key = project.keys.test.secret;
  });

  it("refuses to create one, in JSON and form encoding, and keeps nothing", async () => {
    for (const body of [{ json: { address: address(), chainId: 31337, name: "fwd" } }, { form: { address: address(), chainId: "31337", name: "fwd" } }]) {
      const error = expectError(await call("POST", "/v1/forwarder_contracts", { key, ...body }), 400, "invalid_request_error");
      expect(error.message).toMatch(/not supported/);
      expect(error.details?.address?.value).toBe(address());
    }
    const list = await call("GET", "/v1/forwarder_contracts", { key, query: { limit: 5 } });
    expect(list.status).toBe(200);
    expect(list.body).toMatchObject({ object: "list", data: [], total: 0 });
  });

  it("answers bad input before refusing, and checks the key first", async () => {
    const bad = expectError(await call("POST", "/v1/forwarder_contracts", { key, json: { address: "0x12", chainId: 1 } }), 400);
    expect(Object.keys(bad.details ?? {}).sort()).toEqual(["address", "chainId"]);
    // A test key cannot name a live chain.
    const live = expectError(await call("POST", "/v1/forwarder_contracts", { key, json: { address: address(), chainId: 31339 } }), 400);
    expect(live.details?.chainId).toBeDefined();
    expectError(await call("POST", "/v1/forwarder_contracts", { key: null, json: { address: address(), chainId: 31337 } }), 401);
  });

  it("has none to read, update or delete", async () => {
    for (const [method, options] of [["GET", {}], ["POST", { json: { name: "x" } }], ["DELETE", {}]] as const) {
      expectError(await call(method, "/v1/forwarder_contracts/fwd_123", { key, ...options }), 404);
    }
  });
});
