import http from "node:http";
import type { AddressInfo } from "node:net";
import { eq } from "drizzle-orm";
import type { InngestFunction } from "inngest";
import { expect } from "vitest";
import { entryPointAbi } from "@/contracts/artifacts";
import { startEmbeddedRunner } from "@/inngest/runner";
import { serviceDeployment } from "@/lib/chain/contracts";
import { getDb } from "@/lib/db/client";
import { transactionIntents } from "@/lib/db/schema";
import { call } from "./api";

/**
 * Starts this process's embedded runner with only `functions` (none by default), before any API
 * call sends an event: the intents the API creates then stay pending, for the test to run the
 * relay itself (with @inngest/test, or through /api/inngest) without the runner racing it.
 */
export async function runInProcessOnly(functions: InngestFunction.Any[] = []) {
  await startEmbeddedRunner(await getDb(), functions, { pollMs: 50 });
}

/** An EntryPoint contract and a policy sponsoring `depositTo` on 31337: a real, sponsored call that emits an event. */
export async function sponsoredDeposits(key: string) {
  const abi = entryPointAbi.filter((i) => i.type === "function" && i.name === "depositTo");
  const contract = await call("POST", "/v1/contracts", { key, json: { name: "EntryPoint", chainId: 31337, address: serviceDeployment().entryPoint, abi } });
  expect(contract.status, JSON.stringify(contract.body)).toBe(200);
  const { body: policy } = await call("POST", "/v1/policies", { key, json: { name: "sponsor deposits", chainId: 31337, strategy: { sponsorSchema: "pay_for_user" } } });
  const rule = await call("POST", "/v1/policy_rules", { key, json: { policy: policy.id, type: "contract_functions", contract: contract.body.id, functionName: "depositTo" } });
  expect(rule.status, JSON.stringify(rule.body)).toBe(200);
  return {
    policy: policy.id as string,
    contract: contract.body.id as string,
    /** Creates a sponsored custodial intent through the API: depositTo(paymaster) from a new player's account. */
    async intent(confirmationBlocks = 2): Promise<{ id: string; userOperationHash: `0x${string}` }> {
      const res = await call("POST", "/v1/transaction_intents", {
        key,
        json: { chainId: 31337, policy: policy.id, confirmationBlocks, interactions: [{ contract: contract.body.id, functionName: "depositTo", functionArgs: [serviceDeployment().paymaster] }] },
      });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      return res.body;
    },
  };
}

export async function intentRow(id: string) {
  const [row] = await (await getDb()).select().from(transactionIntents).where(eq(transactionIntents.id, id));
  if (!row) throw new Error(`no intent ${id}`);
  return row;
}

export interface ReceivedRequest {
  method: string;
  path: string;
  headers: http.IncomingHttpHeaders;
  body: string;
}

/** A real local HTTP server recording what it receives and answering with `answer` (200 by default). */
export async function receiver(answer: (req: ReceivedRequest) => { status: number; body?: string } = () => ({ status: 200, body: "ok" })) {
  const received: ReceivedRequest[] = [];
  const server = http.createServer((req, res) => {
    let body = "";
    req.on("data", (chunk) => (body += chunk));
    req.on("end", () => {
      const request = { method: req.method ?? "", path: req.url ?? "", headers: req.headers, body };
      received.push(request);
      const { status, body: out } = answer(request);
      res.writeHead(status, { "content-type": "application/json" }).end(out ?? "");
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    received,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** Polls `probe` until it returns a value other than undefined/false. */
export async function eventually<T>(what: string, probe: () => T | undefined | false | Promise<T | undefined | false>, timeoutMs = 15_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined && value !== false) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}
