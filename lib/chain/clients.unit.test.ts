// The chain's transport over several nodes (CHAIN_<id>_RPC_URL a comma list), against loopback JSON-RPC servers.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loopbackServer, type LoopbackServer } from "@/test/helpers/loopback-server";
import type { ChainConfig } from "./registry";
import { isQuickMethod, nodeClient, publicClient } from "./clients";

// Each path is a node answering with its own number: /slow answers everything after 2.5 s; /stall-once sits on the
// first eth_getTransactionCount it gets (never answers it) and answers everything else at once.
let stalled = false;
let node: LoopbackServer;
let base = "";
beforeAll(async () => {
  node = await loopbackServer((req, res) => {
    let body = "";
    req.on("data", (chunk) => (body += chunk));
    req.on("end", () => {
      const slow = req.url === "/slow";
      if (req.url === "/stall-once" && body.includes("eth_getTransactionCount") && !stalled) return void (stalled = true);
      if (req.url === "/stall-calls" && body.includes("eth_call")) return;
      const result = slow ? "0x1" : "0x2";
      const asked = JSON.parse(body) as { id: number } | { id: number }[];
      const answer = JSON.stringify(Array.isArray(asked) ? asked.map(({ id }) => ({ jsonrpc: "2.0", id, result })) : { jsonrpc: "2.0", id: asked.id, result });
      setTimeout(() => res.writeHead(200, { "content-type": "application/json" }).end(answer), slow ? 2_500 : 0);
    });
  });
  base = node.url;
});
afterAll(() => node.close());

let nextId = 900_001;
const chainOn = (rpcUrl: string): ChainConfig =>
  ({ chainId: nextId++, name: "nodes", rpcUrl, livemode: false, nativeCurrency: { name: "Ether", symbol: "ETH", decimals: 18 }, dev: false, local: null, bundlerUrl: null, deployerKey: null, usdPrice: null }) as ChainConfig;
const to = "0x0000000000000000000000000000000000000001";

describe("a chain with several nodes", () => {
  it("tells quick methods from those that execute or scan", () => {
    for (const method of ["eth_getTransactionReceipt", "eth_blockNumber", "eth_sendRawTransaction"]) expect(isQuickMethod(method)).toBe(true);
    for (const method of ["eth_estimateGas", "eth_call", "eth_getLogs", ""]) expect(isQuickMethod(method)).toBe(false);
  });

  it("a quick read a node sits on is asked again after 2 s, not after the whole timeout (10 s)", async () => {
    // nodeClient: one node (the first) for the reads that must not mix two nodes' heads, retried on it.
    const chain = chainOn(`${base}/stall-once,${base}/slow`);
    const started = performance.now();
    expect(await nodeClient(chain).getTransactionCount({ address: to })).toBe(2);
    const seconds = (performance.now() - started) / 1000;
    expect(stalled).toBe(true);
    expect(seconds).toBeGreaterThanOrEqual(1.9);
    expect(seconds).toBeLessThan(5);
  }, 20_000);

  it("a call that executes keeps the whole timeout: a node answering it in 2.5 s is waited for", async () => {
    const chain = chainOn(`${base}/slow,${base}/stall-once`);
    expect((await nodeClient(chain).call({ to, data: "0x" })).data).toBe("0x1");
  }, 20_000);

  it("a quick read asked in the same tick as a call the node sits on is answered at once: they are not batched together", async () => {
    const client = publicClient(chainOn(`${base}/stall-calls,${base}/slow`));
    const started = performance.now();
    const [, count] = await Promise.all([client.call({ to, data: "0x" }).catch(() => null), client.getTransactionCount({ address: to }).then((n) => [n, performance.now() - started] as const)]);
    expect(count[0]).toBe(2);
    expect(count[1]).toBeLessThan(1_000);
  }, 20_000);

  it("a chain with one node waits for it: nothing is given up at 2 s", async () => {
    expect(await publicClient(chainOn(`${base}/slow`)).getTransactionCount({ address: to })).toBe(1);
  });
});
