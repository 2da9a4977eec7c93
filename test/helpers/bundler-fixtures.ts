import http from "node:http";
import type { AddressInfo } from "node:net";
import { generatePrivateKey, privateKeyToAccount, type PrivateKeyAccount } from "viem/accounts";
import { POST } from "@/app/rpc/[chainId]/route";
import { expect } from "vitest";
import { call } from "./api";
import { followed } from "./follow";
import { viemSmartAccount } from "./viem-account";

/**
 * A plain HTTP server on loopback handing POST /rpc/{chainId} to the real route handler (as Next.js would), so viem's
 * own http transport talks to it unchanged.
 */
export async function rpcServer(): Promise<{ url: string; close: () => Promise<void> }> {
  const server = http.createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const url = new URL(req.url ?? "/", "http://127.0.0.1");
    const match = /^\/rpc\/([^/]+)$/.exec(url.pathname);
    if (!match || req.method !== "POST") {
      res.writeHead(404, { "content-type": "application/json" }).end(JSON.stringify({ error: { type: "invalid_request_error", message: "not found" } }));
      return;
    }
    const headers = Object.fromEntries(Object.entries(req.headers).filter(([, v]) => typeof v === "string")) as Record<string, string>;
    const request = new Request(url, { method: "POST", headers, body: Buffer.concat(chunks) });
    const response = await POST(request, { params: Promise.resolve({ chainId: decodeURIComponent(match[1]!) }) });
    res.writeHead(response.status, Object.fromEntries(response.headers)).end(await response.text());
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** Our v0.6 SmartAccount for a local key as a viem SmartAccount (test/helpers/viem-account.ts), with its id and owner. */
export async function ourAccount(secretKey: string, owner: PrivateKeyAccount = privateKeyToAccount(generatePrivateKey())) {
  const account = await viemSmartAccount(secretKey, { owner });
  return { account, id: account.record.id, address: account.address, owner };
}

/** One raw JSON-RPC call to the bundler RPC: the HTTP status and the parsed body. */
export async function rpc(url: string, method: string, params: unknown[] = [], headers: Record<string, string> = {}) {
  const res = await fetch(url, { method: "POST", headers: { "content-type": "application/json", ...headers }, body: JSON.stringify({ jsonrpc: "2.0", id: 1, method, params }) });
  return { status: res.status, body: (await res.json()) as { result?: any; error?: { code: number; message: string; data?: any } } };
}

/**
 * viem's bundler client set up as its docs do for a bundler with a gas price method: fees from
 * pimlico_getUserOperationGasPrice (the node's own tip suggestion moves between blocks, and our paymaster bounds fees).
 */
export const rpcFees = (url: () => string) => ({
  async estimateFeesPerGas() {
    const { standard } = (await rpc(url(), "pimlico_getUserOperationGasPrice")).body.result;
    return { maxFeePerGas: BigInt(standard.maxFeePerGas), maxPriorityFeePerGas: BigInt(standard.maxPriorityFeePerGas) };
  },
});

/** A policy of `key`'s project sponsoring every call on 31337 (a wildcard contract_functions rule); its id. */
export async function wildcardPolicy(key: string, name: string): Promise<string> {
  const policy = await call("POST", "/v1/policies", { key, json: { name, chainId: 31337, strategy: { sponsorSchema: "pay_for_user" } } });
  expect(policy.status, JSON.stringify(policy.body)).toBe(200);
  const rule = await call("POST", "/v1/policy_rules", { key, json: { policy: policy.body.id, type: "contract_functions", wildcard: true, functionName: "All functions" } });
  expect(rule.status, JSON.stringify(rule.body)).toBe(200);
  return policy.body.id as string;
}

/** The chain follower's reading of 31337 up to its head: how many landings it settled. */
export async function settledByFollower(): Promise<number> {
  return (await followed(31337)).settled;
}
