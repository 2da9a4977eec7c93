// A JSON-RPC proxy on loopback in front of a node, injecting the faults a real provider has: errors (before the
// request reaches the node, or after: it was sent, the answer is lost), requests that hang past the client's timeout,
// and a node lagging behind the head. The chain drill points the server at two of these (a comma list of RPC URLs).
import http from "node:http";
import type { AddressInfo } from "node:net";

export interface Faults {
  /**
   * Share of requests that fail: half before the node gets them (a JSON-RPC internal error), half after (the node did
   * the work, the connection drops before the answer).
   */
  errorRate: number;
  /** Share of requests held 12 s (past viem's 10 s timeout), then dropped. */
  timeoutRate: number;
  /** Blocks this node lags behind the head: the head and the blocks past it answered as the node had them then. */
  lagBlocks: number;
}

export interface RpcProxy {
  url: string;
  faults: Faults;
  /** What it did: requests passed, errors injected (before / after the node), hangs, answers made to lag. */
  counts: { requests: number; errorsBefore: number; errorsAfter: number; hangs: number; lagged: number };
  close(): Promise<void>;
}

type Rpc = { jsonrpc: "2.0"; id: unknown; method: string; params?: unknown[] };

const LOST = Symbol("lost");

async function forward(target: string, body: string): Promise<string> {
  const res = await fetch(target, { method: "POST", headers: { "content-type": "application/json" }, body });
  return res.text();
}

/** A proxy to `target` (a node's URL) with `faults` (changeable while it runs). */
export async function startRpcProxy(target: string, faults: Faults): Promise<RpcProxy> {
  const counts = { requests: 0, errorsBefore: 0, errorsAfter: 0, hangs: 0, lagged: 0 };
  const hanging = new Set<http.ServerResponse>();
  const call = async (rpc: Rpc) => JSON.parse(await forward(target, JSON.stringify(rpc))) as { result?: unknown; error?: unknown };

  /** The node's head, `lagBlocks` back. */
  const laggedHead = async () => {
    const { result } = await call({ jsonrpc: "2.0", id: 1, method: "eth_blockNumber", params: [] });
    const head = BigInt(result as string) - BigInt(proxy.faults.lagBlocks);
    return head < 0n ? 0n : head;
  };

  /** One request as a lagging node answers it, or null to pass it through. */
  async function lagging(rpc: Rpc): Promise<unknown | null> {
    if (proxy.faults.lagBlocks <= 0) return null;
    if (rpc.method === "eth_blockNumber") {
      counts.lagged++;
      return { jsonrpc: "2.0", id: rpc.id, result: `0x${(await laggedHead()).toString(16)}` };
    }
    if (rpc.method === "eth_getBlockByNumber") {
      const tag = rpc.params?.[0];
      const head = await laggedHead();
      if (tag === "latest" || tag === "pending" || tag === "safe" || tag === "finalized") {
        counts.lagged++;
        return call({ ...rpc, params: [`0x${head.toString(16)}`, ...(rpc.params?.slice(1) ?? [])] }).then((r) => ({ jsonrpc: "2.0", id: rpc.id, ...r }));
      }
      if (typeof tag === "string" && tag.startsWith("0x") && BigInt(tag) > head) {
        counts.lagged++;
        return { jsonrpc: "2.0", id: rpc.id, result: null };
      }
    }
    return null;
  }

  /** The answer to one request, or "lost": the node did the work and the answer must not reach the client. */
  async function one(rpc: Rpc): Promise<unknown> {
    counts.requests++;
    const roll = Math.random();
    if (roll < proxy.faults.errorRate / 2) {
      counts.errorsBefore++;
      return { jsonrpc: "2.0", id: rpc.id, error: { code: -32603, message: "injected fault: the node is unavailable" } };
    }
    const lagged = await lagging(rpc);
    if (lagged) return lagged;
    const answer = await call(rpc);
    if (roll < proxy.faults.errorRate) {
      counts.errorsAfter++;
      return LOST;
    }
    return { jsonrpc: "2.0", id: rpc.id, ...answer };
  }

  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", async () => {
      if (Math.random() < proxy.faults.timeoutRate) {
        counts.hangs++;
        hanging.add(res);
        setTimeout(() => {
          hanging.delete(res);
          res.destroy();
        }, 12_000).unref();
        return;
      }
      try {
        const body = JSON.parse(Buffer.concat(chunks).toString("utf8")) as Rpc | Rpc[];
        const answer = Array.isArray(body) ? await Promise.all(body.map(one)) : await one(body);
        // The connection drops before the answer: the client cannot tell whether the node did it.
        if (answer === LOST || (Array.isArray(answer) && answer.includes(LOST))) return void res.destroy();
        res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(answer));
      } catch {
        counts.errorsBefore++;
        res.writeHead(502).end("bad gateway");
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", () => resolve()));
  const proxy: RpcProxy = {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    faults,
    counts,
    async close() {
      for (const res of hanging) res.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  return proxy;
}
