import http from "node:http";
import type { AddressInfo } from "node:net";
import { createPublicClient, getAddress, http as viemHttp, type Address } from "viem";
import { generatePrivateKey, privateKeyToAccount, type PrivateKeyAccount } from "viem/accounts";
import { entryPoint06Abi, getUserOperationHash, toSmartAccount } from "viem/account-abstraction";
import { foundry } from "viem/chains";
import { expect } from "vitest";
import { POST } from "@/app/rpc/[chainId]/route";
import { accountFactoryCall, accountSalt } from "@/lib/chain/accounts";
import { serviceDeployment } from "@/lib/chain/contracts";
import { DUMMY_SIGNATURE, encodeAccountCalls } from "@/lib/chain/userop";
import { call } from "./api";
import { chainOf } from "./chain";

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

/**
 * Our v0.6 SmartAccount as a viem SmartAccount: created through POST /v1/accounts for a local key, execute/executeBatch
 * calls, our factory, the owner's personal_sign of the userOpHash (contracts/src/SmartAccount.sol).
 */
export async function ourAccount(secretKey: string, owner: PrivateKeyAccount = privateKeyToAccount(generatePrivateKey())) {
  const created = await call("POST", "/v1/accounts", { key: secretKey, json: { chainId: 31337, externalOwnerAddress: owner.address } });
  expect(created.status, JSON.stringify(created.body)).toBe(200);
  const address = getAddress(created.body.address as Address);
  const { factory, data } = accountFactoryCall(owner.address, accountSalt(created.body.player.id));
  const client = createPublicClient({ chain: { ...foundry, id: 31337 }, transport: viemHttp(chainOf(31337).rpcUrl) });
  const entryPoint = { address: serviceDeployment().entryPoint, abi: entryPoint06Abi, version: "0.6" as const };
  const account = await toSmartAccount({
    client,
    entryPoint,
    getAddress: async () => address,
    getFactoryArgs: async () => ({ factory, factoryData: data }),
    encodeCalls: async (calls) => encodeAccountCalls(calls.map((c) => ({ to: c.to, value: c.value ?? 0n, data: c.data ?? "0x" }))),
    decodeCalls: undefined,
    getStubSignature: async () => DUMMY_SIGNATURE,
    signMessage: async ({ message }) => owner.signMessage({ message }),
    signTypedData: async () => {
      throw new Error("not used");
    },
    async signUserOperation(op) {
      const hash = getUserOperationHash({ userOperation: { ...op, sender: address } as never, entryPointAddress: entryPoint.address, entryPointVersion: "0.6", chainId: 31337 });
      return owner.signMessage({ message: { raw: hash } });
    },
  });
  return { account, id: created.body.id as string, address, owner };
}

/** One raw JSON-RPC call to the bundler RPC: the HTTP status and the parsed body. */
export async function rpc(url: string, method: string, params: unknown[] = [], headers: Record<string, string> = {}) {
  const res = await fetch(url, { method: "POST", headers: { "content-type": "application/json", ...headers }, body: JSON.stringify({ jsonrpc: "2.0", id: 1, method, params }) });
  return { status: res.status, body: (await res.json()) as { result?: any; error?: { code: number; message: string; data?: any } } };
}
