import fs from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { createPublicClient, http as viemHttp } from "viem";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { inngest } from "@/inngest/client";
import { errorResponse } from "@/lib/http/handle";
import { flushLog } from "@/lib/log";
import { createdProjectLines, maskKey } from "@/lib/projects/banner";
import { errorText, redact } from "@/lib/redact";
import { newProject } from "./helpers/api";

const KEY = "fAkEpRoViDeRkEy0123456789abcdef";
let server: http.Server;
let rpcUrl: string;

beforeAll(async () => {
  // An "RPC provider" on loopback that fails every call, so viem throws its real HttpRequestError.
  server = http.createServer((_req, res) => res.writeHead(500).end("provider down"));
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  rpcUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v2/${KEY}?apikey=${KEY}x`;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));
afterEach(() => {
  vi.restoreAllMocks();
  vi.unstubAllEnvs();
});

async function viemError(): Promise<Error> {
  const client = createPublicClient({ transport: viemHttp(rpcUrl, { retryCount: 0 }) });
  return client.getBlockNumber().then(
    () => {
      throw new Error("expected the RPC call to fail");
    },
    (err: Error) => err,
  );
}

/** Everything the service logged while `work` ran (this process logs to LOG_FILE: test/helpers/worker-setup.ts). */
async function logOutput(work: () => unknown): Promise<string> {
  const file = process.env.LOG_FILE!;
  await flushLog();
  const before = fs.existsSync(file) ? fs.statSync(file).size : 0;
  await work();
  await flushLog();
  return fs.readFileSync(file).subarray(before).toString("utf8");
}

describe("secrets in logs", () => {
  it("a viem error from an RPC URL with a key in its path is logged without the key, by the API's error path (a 502) and by the Inngest logger", async () => {
    const err = await viemError();
    expect(err.message).toContain(KEY); // what would have been printed
    const host = new URL(rpcUrl).host;

    let answer: Response | undefined;
    const apiLog = await logOutput(() => (answer = errorResponse(err, "req_test")));
    // A node that did not answer is the upstream's failure: 502, the node's URL not shown.
    expect(answer!.status).toBe(502);
    expect(await answer!.text()).not.toContain(host);
    expect(apiLog).toContain("HTTP request failed");
    expect(apiLog).toContain(`http://${host}/[redacted]`);
    expect(apiLog).not.toContain(KEY);

    const stepLog = await logOutput(() => inngest.logger.error({ err, runID: "run_1" }, "Inngest step error"));
    expect(stepLog).toContain("Inngest step error");
    expect(stepLog).toContain(host);
    expect(stepLog).not.toContain(KEY);
  });

  it("redact cuts every URL to scheme and host, and removes a configured RPC URL's secret parts wherever they appear", () => {
    vi.stubEnv("CHAIN_424242_RPC_URL", rpcUrl);
    expect(redact(`failed at ${rpcUrl}. retrying`)).toBe(`failed at http://${new URL(rpcUrl).host}/[redacted]. retrying`);
    expect(redact(`request to /v2/${KEY} timed out`)).not.toContain(KEY);
    expect(redact("wss://user:pass@node.example/ws and postgres://app:hunter2@db:5432/main")).toBe("wss://node.example/[redacted] and postgres://db:5432/[redacted]");
    expect(redact("see https://example.com for more")).toBe("see https://example.com for more");
    expect(redact("at file:///work/main/lib/chain/relayer.ts:12:3")).toBe("at file:///work/main/lib/chain/relayer.ts:12:3");
    expect(errorText(new Error("x", { cause: new Error(`via ${rpcUrl}`) }))).not.toContain(KEY);
  });
});

describe("the first-start banner", () => {
  it("prints the test secret key but only a masked live secret key, saying where the full one is", async () => {
    const project = await newProject("banner");
    const text = createdProjectLines(project, ".data/default-project.json", "http://127.0.0.1:3000").join("\n");
    expect(text).toContain(project.keys.test.secret);
    expect(text).toContain(project.keys.live.publishable);
    expect(text).not.toContain(project.keys.live.secret);
    expect(text).toContain(`${maskKey(project.keys.live.secret)} (not printed: read it from .data/default-project.json)`);
    expect(maskKey(project.keys.live.secret)).toMatch(/^sk_live_…[A-Za-z0-9_-]{4}$/);
  });
});
