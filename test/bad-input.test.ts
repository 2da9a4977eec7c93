import { beforeAll, describe, expect, it, vi } from "vitest";
import { call, expectError } from "./helpers/api";
import { createTargets, type Targets } from "./helpers/targets";

/**
 * The bad inputs of issue 13 that answered 500, one by one: each is now a JSON 4xx naming what
 * is wrong. (fuzz.test.ts sweeps every operation and parameter with these and more.)
 */

const deep = (depth: number): unknown => {
  let v: unknown = 1;
  for (let i = 0; i < depth; i++) v = [v];
  return v;
};

let t: Targets;
beforeAll(async () => {
  for (const name of ["RATE_LIMIT_PER_SECOND", "RATE_LIMIT_EXPENSIVE_PER_SECOND"]) vi.stubEnv(name, "0");
  t = await createTargets();
});

describe("odd path ids", () => {
  const collections = ["players", "accounts", "contracts", "policies", "transaction_intents"];

  it("%00 is a 400 naming the id, on every collection", async () => {
    for (const collection of collections) {
      const error = expectError(await call("GET", `/v1/${collection}/%00`, { key: t.key }), 400);
      expect(error.details, collection).toHaveProperty("id");
      expect(error.message).toMatch(/NUL/);
    }
  });

  it("malformed percent-escapes are a 400 naming the path segment", async () => {
    for (const collection of collections) {
      for (const id of ["%ZZ", "%C0%AF", "%FF%FE", "%ED%A0%80"]) {
        const error = expectError(await call("GET", `/v1/${collection}/${id}`, { key: t.key }), 400);
        expect(error.message).toContain(`'${id}'`);
        expect(error.details?.path?.value).toBe(id);
      }
    }
  });

  it("%2F, very long and unicode ids are a JSON 404", async () => {
    for (const collection of collections) {
      for (const id of ["a%2Fb", "%2F", "x".repeat(10_000), "caf%C3%A9", "%F0%9F%92%A5"]) {
        const error = expectError(await call("GET", `/v1/${collection}/${id}`, { key: t.key }), 404);
        expect(error.message.length, "a long id is not echoed back whole").toBeLessThan(300);
      }
    }
  });
});

describe("deep JSON", () => {
  it("4,500 and 100,000 deep, at the top or in any field, is a 400 before anything recursive", async () => {
    for (const depth of [65, 4500, 100_000]) {
      const nested = `${"[".repeat(depth)}1${"]".repeat(depth)}`; // (JSON.stringify itself overflows at 100,000)
      for (const body of [nested, `{"name":${nested}}`, `{"metadata":{"k":${nested}}}`]) {
        const error = expectError(await call("POST", "/v1/players", { key: t.key, raw: { body, contentType: "application/json" } }), 400);
        expect(error.message).toMatch(/nested more than 64 levels/);
      }
    }
    const intent = { ...t.valid["POST /v1/transaction_intents"], interactions: [{ to: "0x00000000000000000000000000000000000000bb", functionArgs: "DEEP" }] };
    const body = JSON.stringify(intent).replace('"DEEP"', `${"[".repeat(4500)}${"]".repeat(4500)}`);
    expectError(await call("POST", "/v1/transaction_intents", { key: t.key, raw: { body, contentType: "application/json" } }), 400);
  });

  it("64 deep still reaches validation", async () => {
    const error = expectError(await call("POST", "/v1/players", { key: t.key, json: { name: deep(63) } }), 400);
    expect(error.details).toHaveProperty("name");
  });
});

describe("unstorable text", () => {
  it("a lone surrogate in metadata is a 400 naming the field", async () => {
    for (const body of ['{"name":"a","metadata":{"k":"\\ud800"}}', '{"name":"a","metadata":{"\\udfff":"v"}}']) {
      const error = expectError(await call("POST", "/v1/players", { key: t.key, raw: { body, contentType: "application/json" } }), 400);
      expect(error.message).toMatch(/Invalid parameter metadata\[.+\]: Unpaired UTF-16 surrogates/);
    }
    const named = expectError(await call("POST", "/v1/players", { key: t.key, raw: { body: '{"name":"\\ud83d"}', contentType: "application/json" } }), 400);
    expect(Object.keys(named.details!)).toEqual(["name"]);
    // a paired one (an emoji) is text like any other
    expect((await call("POST", "/v1/players", { key: t.key, raw: { body: '{"name":"\\ud83d\\udca5"}', contentType: "application/json" } })).body.name).toBe("💥");
  });
});

describe("out-of-range amounts", () => {
  it("interactions[0][value] = 2^256 is a 400 naming it, in JSON and form", async () => {
    const value = (2n ** 256n).toString();
    const input = { ...t.valid["POST /v1/transaction_intents"], interactions: [{ to: "0x00000000000000000000000000000000000000bb", value }] };
    for (const res of [await call("POST", "/v1/transaction_intents", { key: t.key, json: input }), await call("POST", "/v1/transaction_intents", { key: t.key, form: input })]) {
      const error = expectError(res, 400);
      expect(error.details).toHaveProperty(["interactions[0][value]"]);
      expect(error.message).toMatch(/uint256/);
    }
    // 2^256 - 1 passes validation (and fails later on the chain's terms, never with a 500)
    const max = await call("POST", "/v1/transaction_intents", { key: t.key, json: { ...input, interactions: [{ to: input.interactions[0]!.to, value: (2n ** 256n - 1n).toString() }] } });
    expect(max.status).toBeLessThan(500);
    expect(JSON.stringify(max.body)).not.toContain("interactions[0][value]");
  });
});

describe("TRACE", () => {
  it("is a JSON 405 on every route", async () => {
    for (const path of ["/v1/players", "/v1/players/pla_x", "/v1/transaction_intents", "/v1/openapi.json", "/v1/nothing", "/sign/tin_x/status"]) {
      const res = await call("TRACE", path, { key: t.key });
      expect(expectError(res, 405).message).toMatch(/TRACE is not allowed/);
      expect(res.headers.get("allow")).toContain("GET");
    }
  });
});
