import http from "node:http";
import type { AddressInfo, Socket } from "node:net";
import zlib from "node:zlib";
import { afterAll, beforeAll, expect, test } from "vitest";
import { createPublicClient, HttpRequestError, http as viemHttp, ResponseBodyTooLargeError, TimeoutError, type BaseError } from "viem";
import { rpcFetch } from "./rpc-fetch";

// A loopback JSON-RPC server: each path answers one way.
const sockets = new Set<Socket>();
const servedBy = new Map<string, Socket[]>(); // path → the sockets its requests came on
const hanging: Socket[] = [];
let base = "";

const server = http.createServer((req, res) => {
  const path = req.url ?? "/";
  servedBy.set(path, [...(servedBy.get(path) ?? []), req.socket]);
  let body = "";
  req.on("data", (chunk) => (body += chunk));
  req.on("end", () => {
    const answer = (one: { id: number; method: string }) => ({ jsonrpc: "2.0", id: one.id, result: one.method === "eth_chainId" ? "0x7a69" : null });
    const json = () => {
      const asked = JSON.parse(body);
      return JSON.stringify(Array.isArray(asked) ? asked.map(answer) : answer(asked));
    };
    if (path === "/json") return res.writeHead(200, { "content-type": "application/json" }).end(json());
    if (path === "/auth") {
      const ok = req.headers.authorization === `Basic ${Buffer.from("user:p@ss").toString("base64")}`;
      return ok ? res.writeHead(200, { "content-type": "application/json" }).end(json()) : res.writeHead(401).end("who are you");
    }
    if (path === "/gzip") return res.writeHead(200, { "content-type": "application/json", "content-encoding": "gzip" }).end(zlib.gzipSync(json()));
    if (path === "/busy") return res.writeHead(503, "Busy", { "content-type": "text/plain" }).end("come back later");
    if (path === "/hang") return void hanging.push(req.socket);
    if (path === "/big-declared") return res.writeHead(200, { "content-type": "application/json", "content-length": String(11 * 1024 * 1024) }).end();
    if (path === "/big") {
      // Chunked, no length given: refused while reading. The client gives up mid-way, so stop writing on close.
      res.writeHead(200, { "content-type": "application/json" });
      const chunk = Buffer.alloc(1024 * 1024, 0x20);
      let sent = 0;
      const more = () => {
        while (sent < 12 && !res.destroyed) {
          sent++;
          if (!res.write(chunk)) return res.once("drain", more);
        }
        res.end();
      };
      return more();
    }
    if (path === "/cut") {
      res.writeHead(200, { "content-type": "application/json", "content-length": "100" });
      res.write('{"jsonrpc":"2.0"');
      return setTimeout(() => req.socket.destroy(), 20);
    }
    res.writeHead(404).end();
  });
});
let connections = 0;
server.on("connection", (socket) => {
  connections++;
  sockets.add(socket);
  socket.on("close", () => sockets.delete(socket));
});

beforeAll(async () => {
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  for (const socket of sockets) socket.destroy();
  await new Promise((resolve) => server.close(resolve));
});

const client = (url: string, options: { timeout?: number; batch?: boolean } = {}) =>
  createPublicClient({ transport: viemHttp(url, { retryCount: 0, fetchFn: rpcFetch, ...options }) });

const thrown = async (promise: Promise<unknown>) => {
  try {
    await promise;
  } catch (err) {
    return err as BaseError;
  }
  throw new Error("expected a rejection");
};

test("a JSON answer through a viem client, on a port, with credentials in the URL, or gzipped", async () => {
  expect(await client(`${base}/json`).getChainId()).toBe(31337);
  // viem moves user:pass@ into an Authorization header before calling fetchFn.
  const port = new URL(base).port;
  expect(await client(`http://user:p%40ss@127.0.0.1:${port}/auth`).getChainId()).toBe(31337);
  // Called directly with the credentials still in the URL, node:http sends them the same way.
  const direct = await rpcFetch(`http://user:p%40ss@127.0.0.1:${port}/auth`, { method: "POST", body: '{"jsonrpc":"2.0","id":1,"method":"eth_chainId"}' });
  expect([direct.status, direct.ok, direct.body, await direct.json()]).toEqual([200, true, null, { jsonrpc: "2.0", id: 1, result: "0x7a69" }]);
  expect(direct.headers.get("Content-Type")).toBe("application/json");
  expect(await client(`${base}/gzip`).getChainId()).toBe(31337);
});

test("against the anvil the test setup started: one call, and a batch of two", async () => {
  const url = process.env.CHAIN_31337_RPC_URL!;
  expect(await client(url).getChainId()).toBe(31337);
  let posts = 0;
  const batched = createPublicClient({
    transport: viemHttp(url, { batch: true, retryCount: 0, fetchFn: (input, init) => (posts++, rpcFetch(input, init)) }),
  });
  const [blockNumber, chainId] = await Promise.all([batched.getBlockNumber({ cacheTime: 0 }), batched.getChainId()]);
  expect(typeof blockNumber).toBe("bigint");
  expect(chainId).toBe(31337);
  expect(posts).toBe(1);
});

test("a non-2xx answer surfaces as viem's HttpRequestError", async () => {
  const err = await thrown(client(`${base}/busy`).getChainId());
  const http = err.walk((e) => e instanceof HttpRequestError) as HttpRequestError;
  expect(http).toBeInstanceOf(HttpRequestError);
  expect(http.status).toBe(503);
  expect(http.details).toContain("come back later");
});

test("viem's timeout aborts a node that never answers, and the socket is destroyed", async () => {
  const err = await thrown(client(`${base}/hang`, { timeout: 200 }).getChainId());
  expect(err.walk((e) => e instanceof TimeoutError)).toBeInstanceOf(TimeoutError);
  expect(hanging).toHaveLength(1);
  const socket = hanging[0]!;
  if (!socket.destroyed) await new Promise((resolve) => socket.once("close", resolve));
  expect(socket.destroyed).toBe(true);
});

test("an abort signal rejects with its reason", async () => {
  const controller = new AbortController();
  const reason = new Error("caller gave up");
  const pending = rpcFetch(`${base}/hang`, { method: "POST", body: "{}", signal: controller.signal });
  setTimeout(() => controller.abort(reason), 20);
  await expect(pending).rejects.toBe(reason);
  await expect(rpcFetch(`${base}/json`, { signal: AbortSignal.abort() })).rejects.toMatchObject({ name: "AbortError" });
});

test("an oversized answer is refused, whether its length is declared or not", async () => {
  await expect(rpcFetch(`${base}/big-declared`, { method: "POST", body: "{}" })).rejects.toBeInstanceOf(ResponseBodyTooLargeError);
  await expect(rpcFetch(`${base}/big`, { method: "POST", body: "{}" })).rejects.toBeInstanceOf(ResponseBodyTooLargeError);
  const err = await thrown(client(`${base}/big`).getChainId());
  expect(err.walk((e) => e instanceof ResponseBodyTooLargeError)).toBeInstanceOf(ResponseBodyTooLargeError);
});

test("an answer cut short is an error, not a truncated body", async () => {
  const err = await thrown(client(`${base}/cut`).getChainId());
  expect(err.walk((e) => e instanceof HttpRequestError)).toBeInstanceOf(HttpRequestError);
});

test("sequential requests reuse one kept-alive socket", async () => {
  const before = servedBy.get("/json")?.length ?? 0;
  const connectionsBefore = connections;
  const reader = client(`${base}/json`);
  for (let i = 0; i < 5; i++) expect(await reader.getChainId()).toBe(31337);
  const used = servedBy.get("/json")!.slice(before);
  expect(used).toHaveLength(5);
  expect(new Set(used).size).toBe(1);
  // At most one new connection (none when the pool still holds one from an earlier test).
  expect(connections - connectionsBefore).toBeLessThanOrEqual(1);
});
