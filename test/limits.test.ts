import http from "node:http";
import type { AddressInfo } from "node:net";
import { beforeAll, describe, expect, it, vi } from "vitest";
import { z } from "zod";
import { GET as openApiRoute } from "@/app/v1/openapi.json/route";
import { POST as signatureRoute } from "@/app/sign/[id]/signature/route";
import { GET as statusRoute } from "@/app/sign/[id]/status/route";
import { jsonShape, MAX_BODY_BYTES, readBody } from "@/lib/http/body";
import { ApiError } from "@/lib/errors";
import { handle } from "@/lib/http/handle";
import { defineOperation } from "@/lib/http/operation";
import { asClientError } from "@/lib/http/read";
import { signingToken } from "@/lib/intents/signing-link";
import { installRequestHooks } from "@/lib/http/node-server";
import { unroutable } from "@/lib/http/unroutable";
import { call, expectError, newProject } from "./helpers/api";

let key: string;
beforeAll(async () => {
  vi.stubEnv("RATE_LIMIT_PER_SECOND", "0");
  key = (await newProject("limits")).keys.test.secret;
});

/** A body sent in `chunkSize` chunks with no Content-Length, counting how much of it the server pulled. */
function chunkedBody(totalBytes: number, chunkSize = 64 * 1024, byte = "a") {
  const chunk = new TextEncoder().encode(byte.repeat(chunkSize));
  const counter = { pulled: 0 };
  const stream = new ReadableStream<Uint8Array>({
    pull(controller) {
      if (counter.pulled >= totalBytes) return controller.close();
      counter.pulled += chunk.byteLength;
      controller.enqueue(chunk);
    },
  });
  return { stream, counter };
}

const post = (path: string, body: BodyInit, headers: Record<string, string> = {}) =>
  new Request(`http://127.0.0.1:3000${path}`, { method: "POST", body, headers, duplex: "half" } as RequestInit);

async function json(res: Response) {
  const text = await res.text();
  return { status: res.status, body: JSON.parse(text), size: text.length };
}

describe("parameter floods", () => {
  it("refuse more than 1,000 form parameters at once, naming the limit, without parsing them all", async () => {
    // Every name past the first thousand is malformed: had they been parsed (0.7 s of blocked event loop once), the
    // answer would name one of them rather than the limit.
    const flood = Array.from({ length: 100_000 }, (_, i) => (i < 1000 ? `p${i}=1` : `p${i}[=1`)).join("&");
    const res = await call("POST", "/v1/players", { key, form: flood });
    expect(expectError(res, 400).message).toMatch(/at most 1,000/);
    expect(JSON.stringify(res.body).length).toBeLessThan(1000);
  });

  it("count the query string and the body together", async () => {
    const half = (prefix: string) => Array.from({ length: 600 }, (_, i) => `${prefix}${i}=1`).join("&");
    const res = await call("POST", `/v1/players?${half("q")}`, { key, form: half("b") });
    expect(expectError(res, 400).message).toMatch(/at most 1,000/);
    const query = await call("GET", `/v1/players?${Array.from({ length: 1001 }, (_, i) => `q${i}=1`).join("&")}`, { key });
    expect(expectError(query, 400).message).toMatch(/at most 1,000/);
  });

  it("answer 1,000 bad parameters with a readable error: 20 details, the rest counted", async () => {
    const many = Array.from({ length: 1000 }, (_, i) => `p${i}=1`).join("&");
    for (const res of [
      await call("POST", "/v1/players", { key, form: many }),
      await call("POST", "/v1/players", { key, json: Object.fromEntries(Array.from({ length: 1000 }, (_, i) => [`p${i}`, 1])) }),
    ]) {
      const error = expectError(res, 400);
      expect(Object.keys(error.details!)).toHaveLength(20);
      expect(error.message).toMatch(/and [\d,]+ more$/);
      expect(JSON.stringify(res.body).length).toBeLessThan(4000); // was 6 MB
    }
  });

  it("refuse JSON bodies with more than 1,000 parameters, or 10,000 members at any depth", async () => {
    const flood = (n: number) => Object.fromEntries(Array.from({ length: n }, (_, i) => [`p${i}`, 1]));
    for (const [json, limit] of [
      [flood(1001), /at most 1,000/],
      [flood(60_000), /at most 10,000/],
      [{ name: "x", metadata: flood(20_000) }, /at most 10,000/],
    ] as const) {
      const res = await call("POST", "/v1/players", { key, json });
      expect(expectError(res, 400).message).toMatch(limit);
    }
  });

  it("cut long echoed values and names", async () => {
    const res = await call("POST", "/v1/players", { key, json: { name: "x".repeat(50_000), ["k".repeat(5000)]: 1 } });
    const error = expectError(res, 400);
    expect(JSON.stringify(res.body).length).toBeLessThan(2000);
    expect(Object.keys(error.details!).every((name) => name.length <= 201)).toBe(true);
  });
});

describe("bodies of any size", () => {
  it("stop reading a chunked body at 1 MiB: 413, the rest never pulled", async () => {
    const { stream, counter } = chunkedBody(200 * 1024 * 1024);
    const { POST } = await import("@/app/v1/players/route");
    const answer = await json(await POST(post("/v1/players", stream, { authorization: `Bearer ${key}`, "content-type": "application/json" }), { params: Promise.resolve({}) }));
    expect(answer.status).toBe(413);
    expect(answer.body.error.message).toMatch(/1 MiB/);
    expect(counter.pulled).toBeLessThan(MAX_BODY_BYTES + 3 * 64 * 1024);
  });

  it("refuse a declared Content-Length over the limit before reading anything", async () => {
    const { stream, counter } = chunkedBody(2 * 1024 * 1024);
    await expect(readBody(post("/x", stream, { "content-length": String(2 * 1024 * 1024) }))).rejects.toMatchObject({ status: 413 });
    expect(counter.pulled).toBeLessThanOrEqual(64 * 1024); // at most what the stream queued up front
  });

  it("accept a body of exactly 1 MiB", async () => {
    const text = `name=${"a".repeat(MAX_BODY_BYTES - 5)}`;
    expect(Buffer.byteLength(text)).toBe(MAX_BODY_BYTES);
    await expect(readBody(post("/x", text, { "content-type": "application/x-www-form-urlencoded" }))).resolves.toMatchObject({ name: expect.any(String) });
    await expect(readBody(post("/x", `${text}a`, { "content-type": "application/x-www-form-urlencoded" }))).rejects.toMatchObject({ status: 413 });
  });
});

describe("the signing routes", () => {
  it("check a ?t= token before reading the body", async () => {
    const { stream, counter } = chunkedBody(10 * 1024 * 1024);
    const res = await json(await signatureRoute(post("/sign/tin_x/signature?t=garbage", stream, { "content-type": "application/json" }), { params: Promise.resolve({ id: "tin_x" }) }));
    expect(res.status).toBe(401);
    expect(counter.pulled).toBeLessThanOrEqual(64 * 1024);
  });

  it("read at most 16 KiB of a body that carries the token itself, before checking it", async () => {
    const { stream, counter } = chunkedBody(10 * 1024 * 1024);
    const res = await json(await signatureRoute(post("/sign/tin_x/signature", stream, { "content-type": "application/json" }), { params: Promise.resolve({ id: "tin_x" }) }));
    expect(res.status).toBe(413);
    expect(counter.pulled).toBeLessThanOrEqual(2 * 64 * 1024);
    const small = await json(await signatureRoute(post("/sign/tin_x/signature", JSON.stringify({ token: "garbage", signature: "0x00" }), { "content-type": "application/json" }), { params: Promise.resolve({ id: "tin_x" }) }));
    expect(small.status).toBe(401);
  });

  it("answer odd intent ids with a JSON 4xx", async () => {
    const token = await signingToken({ id: "tin_x", projectId: "pro_x", livemode: false, sponsored: false, createdAt: new Date() });
    for (const id of ["\u0000", "\ud800", "%ZZ", "a/b", "x".repeat(10_000)]) {
      const res = await json(await statusRoute(new Request(`http://127.0.0.1:3000/sign/x/status?t=${token}`), { params: Promise.resolve({ id }) }));
      expect(res.status, id).toBeGreaterThanOrEqual(400);
      expect(res.status, id).toBeLessThan(500);
      expect(res.body.error.message, id).toBeTypeOf("string");
    }
    // A link made out to the odd id itself passes authentication, and the id is refused, named.
    const nulToken = await signingToken({ id: "\u0000", projectId: "pro_x", livemode: false, sponsored: false, createdAt: new Date() });
    const nul = await json(await statusRoute(new Request(`http://127.0.0.1:3000/sign/x/status?t=${nulToken}`), { params: Promise.resolve({ id: "\u0000" }) }));
    expect(nul).toMatchObject({ status: 400, body: { error: { details: { id: { message: expect.stringMatching(/NUL/) } } } } });
  });
});

describe("the reading boundary", () => {
  it("turns anything thrown while reading a request into a 400", async () => {
    const exploding = defineOperation({
      operationId: "explode",
      method: "POST",
      path: "/v1/explode",
      summary: "",
      tag: "test",
      input: z.preprocess(() => {
        throw new RangeError("Maximum call stack size exceeded");
      }, z.object({})),
      response: z.object({}),
      run: async () => ({}),
    });
    const res = await json(await handle(exploding)(post("/v1/explode", "a=1", { authorization: `Bearer ${key}`, "content-type": "application/x-www-form-urlencoded" })));
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({ type: "invalid_request_error", message: expect.stringMatching(/could not be read/) });
    expect(asClientError(new TypeError("x"))).toBeInstanceOf(ApiError);
    const api = new ApiError(409, "invalid_request_error", "kept");
    expect(asClientError(api)).toBe(api);
  });

  it("measures JSON depth and members without recursion, skipping strings", () => {
    expect(jsonShape('{"a":[1,{"b":"[[[[{{{:"}]}')).toEqual({ depth: 3, members: 2 });
    expect(jsonShape('"\\"[[:"')).toEqual({ depth: 0, members: 0 });
    expect(jsonShape("[".repeat(1_000_000)).depth).toBe(1_000_000);
  });
});

describe("requests Next.js cannot route", () => {
  let server: http.Server;
  let port: number;
  beforeAll(async () => {
    installRequestHooks();
    // Stands in for Next.js: what reaches it answers 500, as Next.js did for these requests.
    server = http.createServer((_req, res) => res.writeHead(500).end("Internal Server Error"));
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    port = (server.address() as AddressInfo).port;
    return () => new Promise<void>((resolve) => server.close(() => resolve()));
  });

  const send = (method: string, path: string, body?: string) =>
    new Promise<{ status: number; body: any; headers: http.IncomingHttpHeaders }>((resolve, reject) => {
      const req = http.request({ host: "127.0.0.1", port, method, path }, (res) => {
        let text = "";
        res.on("data", (d) => (text += d));
        res.on("end", () => resolve({ status: res.statusCode!, body: text.startsWith("{") ? JSON.parse(text) : text, headers: res.headers }));
      });
      req.on("error", reject);
      req.end(body);
    });

  it("answers TRACE and other unrouted methods with a JSON 405 naming the allowed ones", async () => {
    // (Methods node's HTTP parser does not know, such as TRACK, get its own empty 400 before any of this.)
    for (const method of ["TRACE", "PROPFIND", "MKCOL", "PURGE"]) {
      const res = await send(method, "/v1/players", method === "PURGE" ? "a=1" : undefined);
      expect(res.status, method).toBe(405);
      expect(res.body.error, method).toMatchObject({ type: "invalid_request_error", message: expect.stringContaining(method) });
      expect(res.headers.allow).toContain("GET");
    }
    expect((await send("TRACE", "/")).status).toBe(405);
  });

  it("answers an API path that does not percent-decode with a JSON 400 naming it", async () => {
    for (const id of ["%ZZ", "%C0%AF", "%FF%FE", "%ED%A0%80", "%E0%A4%A", "%"]) {
      for (const path of [`/v1/players/${id}`, `/v1/accounts/${id}/sync`, `/sign/${id}/status?t=x`, `/iam/v1/${id}`]) {
        const res = await send("GET", path);
        expect(res.status, path).toBe(400);
        expect(res.body.error.message, path).toContain(`'${id}'`);
        expect(res.body.error.details.path.value, path).toBe(id);
      }
    }
  });

  it("lets everything else through to Next.js", async () => {
    for (const path of ["/v1/players/pla_%C3%A9%00%2F", "/v1/players?x=%ZZ", "/projects/x/test", "/"]) {
      expect((await send("GET", path)).status, path).toBe(500);
    }
    expect(unroutable("GET", "http://host/v1/players/%ZZ")?.status).toBe(400);
  });
});

describe("the OpenAPI document", () => {
  it("is built once, then served per origin cheaply", async () => {
    const first = await openApiRoute(new Request("http://127.0.0.1:3000/v1/openapi.json")).json();
    const started = performance.now();
    for (let i = 0; i < 100; i++) openApiRoute(new Request("http://127.0.0.1:3000/v1/openapi.json", { headers: { host: `h${i}.example` } }));
    expect(performance.now() - started).toBeLessThan(1000); // was ~17 ms each
    const other = await openApiRoute(new Request("http://127.0.0.1:3000/v1/openapi.json", { headers: { host: 'evil"},"x":{"y' } })).json();
    expect(other.servers).toEqual([{ url: 'http://evil"},"x":{"y' }]);
    expect({ ...other, servers: first.servers }).toEqual(first);
  });
});
