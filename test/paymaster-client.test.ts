import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { serviceDeployment } from "@/lib/chain/contracts";
import { ApiError } from "@/lib/errors";
import { supportedEntryPoints, type ServiceCall } from "@/lib/paymasters/client";
import type { ProjectWithKeys } from "@/lib/projects/service";
import { call, expectError, newProject } from "./helpers/api";

/**
 * The ERC-7677 client's bounds on what a registered service answers (size and total time, after the headers too),
 * against loopback peers that misbehave; and paymaster URLs normalised and refused like the other outbound URLs.
 */

interface Peer {
  url: string;
  /** Bytes the peer wrote before its connection ended. */
  sent: () => number;
  closed: () => boolean;
  close: () => Promise<void>;
}

/** A loopback peer answering every request with `answer`, counting what it sent and whether the client hung up. */
async function peer(answer: (res: http.ServerResponse, state: { sent: number; closed: boolean }) => void): Promise<Peer> {
  const state = { sent: 0, closed: false };
  const server = http.createServer((req, res) => {
    req.resume();
    res.on("close", () => (state.closed = true));
    answer(res, state);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/rpc`,
    sent: () => state.sent,
    closed: () => state.closed,
    close: () => new Promise<void>((r) => {
      server.closeAllConnections();
      server.close(() => r());
    }),
  };
}

/** Writes `chunk` every `everyMs` until the client hangs up. */
function stream(res: http.ServerResponse, state: { sent: number; closed: boolean }, chunk: string, everyMs: number) {
  res.writeHead(200, { "content-type": "application/json" });
  res.write('{"jsonrpc":"2.0","id":1,"result":["');
  const timer = setInterval(() => {
    if (state.closed) return clearInterval(timer);
    res.write(chunk);
    state.sent += chunk.length;
  }, everyMs);
  res.on("close", () => clearInterval(timer));
}

const serviceCall = (url: string): ServiceCall => ({ url, livemode: false, chainId: 31337, entryPoint: serviceDeployment().entryPoint, context: null, who: "Paymaster pay_test", param: "paymaster", paramValue: "pay_test" });

async function failure(url: string): Promise<{ error: ApiError }> {
  const error = await supportedEntryPoints(serviceCall(url)).then(
    (answer) => {
      throw new Error(`expected a refusal, got ${JSON.stringify(answer).slice(0, 100)}`);
    },
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(ApiError);
  return { error: error as ApiError };
}

const until = async (what: () => boolean, ms = 2_000) => {
  for (const end = Date.now() + ms; !what() && Date.now() < end; ) await new Promise((r) => setTimeout(r, 20));
  return what();
};

describe("the ERC-7677 client reads answers with a size and a time bound", () => {
  const peers: Peer[] = [];
  afterAll(() => Promise.all(peers.map((p) => p.close())));
  afterEach(() => vi.unstubAllEnvs());

  it("a well-formed answer far larger than any ERC-7677 result (1 MiB, with its length) is a 502 saying so", async () => {
    const body = JSON.stringify({ jsonrpc: "2.0", id: 1, result: Array.from({ length: 1 << 14 }, () => `0x${"ab".repeat(31)}`) });
    expect(body.length).toBeGreaterThan(1 << 20);
    const huge = await peer((res) => res.writeHead(200, { "content-type": "application/json", "content-length": Buffer.byteLength(body) }).end(body));
    peers.push(huge);
    const { error } = await failure(huge.url);
    expect(error.status).toBe(502);
    expect(error.message).toMatch(/larger than 64 KiB/);
    expect(error.details?.paymaster).toMatchObject({ value: "pay_test" });
  });

  it("an answer that streams without end stops being read past the bound, and the connection is closed", async () => {
    const endless = await peer((res, state) => stream(res, state, "ab".repeat(8_192), 1));
    peers.push(endless);
    const { error } = await failure(endless.url);
    expect(error.status).toBe(502);
    expect(error.message).toMatch(/larger than 64 KiB/);
    expect(await until(endless.closed)).toBe(true);
    // Read up to the bound, not the 10 MiB viem allows by default (what was buffered in flight aside).
    expect(endless.sent()).toBeLessThan(4 << 20);
  });

  it("headers at once, then a byte at a time: the whole answer must arrive within PAYMASTER_TIMEOUT_MS", async () => {
    vi.stubEnv("PAYMASTER_TIMEOUT_MS", "600");
    const trickle = await peer((res, state) => stream(res, state, "a", 50));
    peers.push(trickle);
    // The peer never finishes and never pauses for 50 ms: a refusal at all is the deadline on the whole answer (a
    // deadline per read would wait for ever), given while bytes were still arriving.
    const { error } = await failure(trickle.url);
    const sentWhenRefused = trickle.sent();
    expect(error.status).toBe(502);
    expect(error.message, error.message).toMatch(/no answer within 0\.6 s/);
    expect(sentWhenRefused).toBeGreaterThan(0);
    expect(await until(trickle.closed)).toBe(true);
  });

  it("a prompt, small answer is read as before", async () => {
    const fine = await peer((res) => res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ jsonrpc: "2.0", id: 1, result: [serviceDeployment().entryPoint] })));
    peers.push(fine);
    expect(await supportedEntryPoints(serviceCall(fine.url))).toEqual([serviceDeployment().entryPoint]);
  });
});

describe("paymaster URLs follow the outbound rule's normalisation", () => {
  let project: ProjectWithKeys;
  let key: string;
  beforeAll(async () => {
    project = await newProject("paymaster urls");
    key = project.keys.test.secret;
  });
  const register = (url: unknown) => call("POST", "/v1/paymasters", { key, json: { address: serviceDeployment().paymaster, chainId: 31337, url } });

  it("refuses CR/LF, other control characters and any userinfo, empty too, with a 400 naming url", async () => {
    for (const url of ["http://127.0.0.1:1/rpc\r\nX-Injected: 1", "http://127.0.0.1:1/rpc\n", "http://127.0.0.1:1/r\tpc", "https://@127.0.0.1/rpc", "https://:@127.0.0.1/rpc", "https://user:pw@127.0.0.1/rpc"]) {
      const error = expectError(await register(url), 400);
      expect(error.details?.url, JSON.stringify(url)).toMatchObject({ value: url });
    }
    const created = (await register("http://127.0.0.1:1/ok")).body;
    expect(created.url).toBe("http://127.0.0.1:1/ok");
    expectError(await call("POST", `/v1/paymasters/${created.id}`, { key, json: { url: "http://127.0.0.1:1/ok\r\n" } }), 400);
    expectError(await call("POST", `/v1/paymasters/${created.id}`, { key, json: { url: "http://@127.0.0.1:1/ok" } }), 400);
    expect((await call("GET", `/v1/paymasters/${created.id}`, { key })).body.url).toBe("http://127.0.0.1:1/ok");
  });

  it("stores and answers the URL normalised, on create and on update", async () => {
    const created = await register("HTTP://127.0.0.1:80/a/../rpc?k=1");
    expect(created.status, JSON.stringify(created.body)).toBe(200);
    expect(created.body.url).toBe("http://127.0.0.1/rpc?k=1");
    const updated = await call("POST", `/v1/paymasters/${created.body.id}`, { key, json: { url: "http://LOCALHOST:8545" } });
    expect(updated.body.url).toBe("http://localhost:8545/");
    expect((await call("GET", `/v1/paymasters/${created.body.id}`, { key })).body.url).toBe("http://localhost:8545/");
  });
});
