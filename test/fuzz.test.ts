import qs from "qs";
import { beforeAll, describe, expect, it, vi } from "vitest";
import { GET as openApiRoute } from "@/app/v1/openapi.json/route";
import { call, type ApiResponse } from "./helpers/api";
import { createTargets, type Targets } from "./helpers/targets";

/**
 * Every operation of the OpenAPI document, every parameter (nested ones too: `interactions[0][value]`),
 * hostile values in JSON and form encodings, hostile path ids and whole bodies: never a 5xx, always
 * a JSON error. Values are sampled per parameter (all of them over the run) to stay within a minute.
 */

type Schema = { $ref?: string; type?: string | string[]; properties?: Record<string, Schema>; items?: Schema; oneOf?: Schema[]; anyOf?: Schema[] };
type Doc = { paths: Record<string, Record<string, any>>; components: { schemas: Record<string, Schema> } };

const deep = (depth: number, leaf: unknown = 1): unknown => {
  let v = leaf;
  for (let i = 0; i < depth; i++) v = [v];
  return v;
};
const wide = (n: number) => Object.fromEntries(Array.from({ length: n }, (_, i) => [`k${i}`, i]));

/** Stands for JSON nested 4,500 deep, spliced into the body text (JSON.stringify of it overflows the test's own stack). */
const DEEP = "\u0001deep";
const DEEP_TEXT = `${"[".repeat(4500)}1${"]".repeat(4500)}`;
const jsonOf = (input: Record<string, unknown>) => JSON.stringify(input).replaceAll(JSON.stringify(DEEP), DEEP_TEXT);

const HOSTILE: unknown[] = [
  null, true, false, 0, -1, 1.5, 1e308, -1e308, 2 ** 53 + 1, "", " ", "x".repeat(20_000), "NaN", "1e999", "-0", "0x", "-1",
  "115792089237316195423570985008687907853269984665640564039457584007913129639936", // 2^256
  `0x${"f".repeat(65)}`, "💥\u202e", "%00", "%ZZ", "\u0000", "\ud800", "\udfff", "' or 1=1 --", "../../etc/passwd", "<script>",
  "constructor", "__proto__", [], [null], [[[]]], {}, { a: { b: { c: {} } } }, JSON.parse('{"__proto__":{"polluted":true}}'),
  Array.from({ length: 60 }, (_, i) => String(i)), wide(60), deep(100), { "\u0000": 1 }, { "\ud800": "x" }, DEEP, { k: DEEP },
];
/** Values per parameter and encoding; rotated so every value meets many parameters. */
const PER_PARAM = 12;

const PATH_IDS = [
  "%00", "a%00b", "%2F", "a%2Fb", "x".repeat(5000), "caf%C3%A9", "%F0%9F%92%A5", "%ZZ", "%C0%AF", "%FF%FE", "%ED%A0%80", "%E0%A4%A",
  "%20", "..", "%2e%2e", "null", "0", "-1", `pla_${"9".repeat(300)}`, "%25", "%2500",
];

/** Whole bodies (JSON) that are not an object of parameters, or that break a parser. */
const BODIES = [
  "", "null", "[]", "\"text\"", "1e999", "{", "{\"a\":", "{\"a\":1,}", DEEP_TEXT, `{"a":${"[".repeat(100_000)}${"]".repeat(100_000)}}`,
  "{\"name\":\"\\ud800\"}", "{\"name\":\"\\u0000\"}", `{${"\"a\":1,".repeat(20_000)}"b":2}`, "\uFEFF{}",
];

let targets: Targets;
let doc: Doc;

beforeAll(async () => {
  // The per-project limits are not what this file is about (auth.test.ts covers them).
  for (const name of ["RATE_LIMIT_PER_SECOND", "RATE_LIMIT_EXPENSIVE_PER_SECOND", "RATE_LIMIT_PUBLIC_PER_MINUTE"]) vi.stubEnv(name, "0");
  targets = await createTargets();
  doc = await openApiRoute(new Request("http://127.0.0.1:3000/v1/openapi.json")).json();
});

function resolve(schema: Schema | undefined, seen = 0): Schema | undefined {
  if (!schema || seen > 5) return schema;
  if (schema.$ref) return resolve(doc.components.schemas[schema.$ref.replace("#/components/schemas/", "")], seen + 1);
  const variant = (schema.oneOf ?? schema.anyOf)?.find((s) => resolve(s, seen + 1)?.properties);
  return variant ? resolve(variant, seen + 1) : schema;
}

/** Parameter paths of a schema: its properties, and those of objects and array items within, two levels down. */
function parameterPaths(schema: Schema | undefined, prefix: (string | number)[] = [], depth = 0): (string | number)[][] {
  const s = resolve(schema);
  if (!s?.properties || depth > 2) return [];
  const out: (string | number)[][] = [];
  for (const [name, child] of Object.entries(s.properties)) {
    const path = [...prefix, name];
    out.push(path);
    const c = resolve(child);
    if (c?.properties) out.push(...parameterPaths(c, path, depth + 1));
    const items = resolve(c?.items);
    if (items?.properties) out.push(...parameterPaths(items, [...path, 0], depth + 1));
  }
  return out;
}

function setAt(input: Record<string, unknown>, path: (string | number)[], value: unknown): Record<string, unknown> {
  const root = structuredClone(input);
  let node: any = root;
  for (let i = 0; i < path.length - 1; i++) {
    const key = path[i]!;
    if (node[key] === null || typeof node[key] !== "object") node[key] = typeof path[i + 1] === "number" ? [{}] : {};
    node = node[key];
  }
  node[path.at(-1)!] = value;
  return root;
}

const formOf = (input: Record<string, unknown>): string | null => {
  try {
    return qs.stringify(input, { arrayFormat: "indices" });
  } catch {
    return null; // qs cannot write it (a lone surrogate): a form cannot carry it either
  }
};

/** A failure description, or null when the answer is a non-5xx and, if an error, the JSON envelope. */
function judge(res: ApiResponse, what: string): string | null {
  const ok = res.status < 500 && (res.status < 300 || (typeof res.body?.error?.message === "string" && typeof res.body?.error?.type === "string"));
  return ok ? null : `${what} → ${res.status} ${JSON.stringify(res.body)?.slice(0, 200)}`;
}

const operations = () =>
  Object.entries(doc.paths).flatMap(([path, methods]) => Object.entries(methods).map(([method, entry]) => ({ path, method: method.toUpperCase(), entry })));

const show = (v: unknown) => (JSON.stringify(v) ?? String(v)).slice(0, 40);

describe("fuzzing the OpenAPI document", () => {
  it("never answers a 5xx or a non-JSON error, for any parameter of any operation, in JSON or form encoding", async () => {
    const failures: string[] = [];
    let calls = 0;
    let rotation = 0;
    for (const { path, method, entry } of operations()) {
      const url = path.replace("{id}", targets.ids[path] ?? "pla_x").replace("{triggerId}", targets.ids["{triggerId}"]!).replace("{publishableKey}", targets.ids["{publishableKey}"]!);
      const valid = targets.valid[`${method} ${path}`] ?? {};
      const inQuery = method === "GET" || method === "DELETE";
      const schema: Schema | undefined = inQuery
        ? { properties: Object.fromEntries(entry.parameters.filter((p: any) => p.in === "query").map((p: any) => [p.name, p.schema])) }
        : entry.requestBody?.content["application/json"].schema;
      const paths = [...parameterPaths(schema), ["unknown"]];
      for (const param of paths) {
        const values = Array.from({ length: PER_PARAM }, () => HOSTILE[rotation++ % HOSTILE.length]);
        const attempts = values.flatMap((value) => {
          const input = setAt(valid, param, value);
          const form = formOf(input);
          const what = `${method} ${path} ${param.join(".")}=${show(value)}`;
          if (inQuery) return form === null ? [] : [call(method, `${url}?${form}`, { key: targets.key }).then((r) => judge(r, what))];
          return [
            call(method, url, { key: targets.key, raw: { body: jsonOf(input), contentType: "application/json" } }).then((r) => judge(r, `${what} (json)`)),
            ...(form === null ? [] : [call(method, url, { key: targets.key, form }).then((r) => judge(r, `${what} (form)`))]),
          ];
        });
        calls += attempts.length;
        for (const failure of await Promise.all(attempts)) if (failure) failures.push(failure);
      }
    }
    expect(failures.slice(0, 30)).toEqual([]);
    expect(calls).toBeGreaterThan(1500);
  }, 120_000);

  it("answers hostile path ids with a JSON 4xx, on every operation that has one", async () => {
    const failures: string[] = [];
    for (const { path, method } of operations().filter((op) => op.path.includes("{id}"))) {
      const results = await Promise.all(
        PATH_IDS.map(async (id) => {
          const res = await call(method, path.replace("{id}", id).replace("{triggerId}", targets.ids["{triggerId}"]!), { key: targets.key, ...(method === "POST" && { json: targets.valid[`${method} ${path}`] ?? {} }) });
          const problem = judge(res, `${method} ${path} id=${id.slice(0, 30)}`);
          // A dot segment takes the request to another path (as curl and fetch would): no 4xx owed.
          const elsewhere = !new URL(path.replace("{id}", id).replace("{triggerId}", "tri_x"), "http://x").pathname.startsWith(path.split("{id}")[0]!);
          return problem ?? (res.status < 400 && !elsewhere ? `${method} ${path} id=${id.slice(0, 30)} → ${res.status}, expected a 4xx` : null);
        }),
      );
      failures.push(...results.filter((r): r is string => r !== null));
    }
    expect(failures.slice(0, 30)).toEqual([]);
  }, 60_000);

  it("answers hostile whole bodies with a JSON 4xx, on every operation that takes one", async () => {
    const failures: string[] = [];
    for (const { path, method } of operations().filter((op) => op.method === "POST" || op.method === "PUT")) {
      const url = path.replace("{id}", targets.ids[path] ?? "pla_x").replace("{triggerId}", targets.ids["{triggerId}"]!).replace("{publishableKey}", targets.ids["{publishableKey}"]!);
      const results = await Promise.all([
        ...BODIES.map((body) => call(method, url, { key: targets.key, raw: { body, contentType: "application/json" } }).then((r) => judge(r, `${method} ${path} body=${body.slice(0, 30)}`))),
        call(method, url, { key: targets.key, raw: { body: "<a/>", contentType: "text/xml" } }).then((r) => judge(r, `${method} ${path} xml`)),
        call(method, url, { key: targets.key, form: `${"a[b]".repeat(1)}=1&a=2&${"%ZZ=%ZZ&"}x[${"[".repeat(50)}=1` }).then((r) => judge(r, `${method} ${path} bad form`)),
      ]);
      failures.push(...results.filter((r): r is string => r !== null));
    }
    expect(failures.slice(0, 30)).toEqual([]);
  }, 60_000);
});
