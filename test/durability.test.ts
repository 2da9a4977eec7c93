import fs from "node:fs";
import path from "node:path";
import postgres from "postgres";
import { encodeFunctionData, type Address, type Hex } from "viem";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { entryPointAbi } from "@/contracts/artifacts";
import { toEntryPointOp } from "@/lib/chain/userop";
import { deserializeUserOp } from "@/lib/intent-records/userop-json";
import { clientOf, entryPointHistory, fundedWallet, mined } from "./helpers/chain";
import { startServer, type RunningServer } from "./helpers/server";

const ENTRY_POINT = "0x5FF137D4b0FDCD49DcA30c7CF57E578a026d2789";
const ENTRY_POINT_ABI = entryPointAbi.filter((item) => item.type === "function" && item.name === "depositTo");
/** Intents landed and confirming when the server dies, and intents still on their way to the chain then. */
const LANDED_BEFORE = 5;
const IN_FLIGHT = 15;
const N = LANDED_BEFORE + IN_FLIGHT;
/** Of those in flight, how many we land ourselves while the server is dead: a bundle it sent, mined after it died. */
const MINED_WHILE_DEAD = 3;

let server: RunningServer;
beforeAll(async () => {
  // Ops wait 2 s in the relay queue for company: the kill finds them there, in memory only. On
  // PostgreSQL the restarted server takes the dead one's runs over when their lease runs out (on
  // PGlite at once: it owns the database alone).
  server = await startServer({ RELAY_BATCH_WINDOW_MS: "2000", RUNNER_LEASE_MS: "5000" });
}, 600_000);
afterAll(async () => {
  await server?.stop();
});

interface Intent {
  id: string;
  userOperationHash: Hex;
  userOperation: Record<string, string>;
  response?: { status: number; transactionHash: Hex; blockNumber: number };
}

describe("a server killed mid-relay", () => {
  it("and started again on the same database lands every intent exactly once, none failed", async () => {
    const { keys } = JSON.parse(fs.readFileSync(path.join(server.dataDir, "default-project.json"), "utf8"));
    const api = async <T = any>(method: string, route: string, body?: unknown): Promise<T> => {
      const res = await fetch(`${server.url}${route}`, {
        method,
        headers: { authorization: `Bearer ${keys.test.secret}`, ...(body ? { "content-type": "application/json" } : {}) },
        body: body ? JSON.stringify(body) : undefined,
      });
      const json = await res.json();
      if (res.status !== 200) throw new Error(`${method} ${route}: ${res.status} ${JSON.stringify(json)}`);
      return json as T;
    };
    const entryPoint = await api("POST", "/v1/contracts", { name: "EntryPoint", chainId: 31337, address: ENTRY_POINT, abi: ENTRY_POINT_ABI });
    const policy = await api("POST", "/v1/policies", { name: "Free", chainId: 31337, strategy: { sponsorSchema: "pay_for_user" } });
    await api("POST", "/v1/policy_rules", { policy: policy.id, type: "contract_functions", contract: entryPoint.id, functionName: "depositTo" });
    const account = await api("POST", "/v1/accounts", { chainId: 31337 });
    /** Waits until every intent has its response; fails at once when an intent of the account failed. */
    const landed = async (ids: string[], timeoutMs: number): Promise<Intent[]> => {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const failed = await api("GET", `/v1/transaction_intents?account[]=${account.id}&status=0&limit=100`);
        if (failed.total > 0) throw new Error(`intents failed: ${JSON.stringify(failed.data)}\n${server.output().slice(-3000)}`);
        const intents = await Promise.all(ids.map((id) => api<Intent>("GET", `/v1/transaction_intents/${id}`)));
        if (intents.every((i) => i.response)) return intents;
        const pending = intents.filter((i) => !i.response).map((i) => i.id);
        if (Date.now() > deadline) throw new Error(`intents did not land: ${pending.join(", ")}\n${server.output().slice(-3000)}`);
        await new Promise((r) => setTimeout(r, 250));
      }
    };
    const intent = () => api<Intent>("POST", "/v1/transaction_intents", { chainId: 31337, account: account.id, policy: policy.id, interactions: [{ contract: entryPoint.id, functionName: "depositTo", functionArgs: [account.id] }] });
    // The account's deployment rides on a first op; after it, ops of the account land in any order.
    const [deployment] = (await landed([(await intent()).id], 60_000)) as [Intent];
    expect(deployment.response!.status).toBe(1);
    const fromBlock = BigInt(deployment.response!.blockNumber) + 1n;
    const onChain = async () => (await entryPointHistory(31337, account.address, fromBlock)).timesByHash;

    // Some intents land and wait for their confirmation blocks…
    const first = await Promise.all(Array.from({ length: LANDED_BEFORE }, intent));
    await landed(first.map((i) => i.id), 60_000);
    // …the others are accepted (200, recorded, relay queued), and the server dies at once.
    const second = await Promise.all(Array.from({ length: IN_FLIGHT }, intent));
    await server.kill();
    const all = [...first, ...second];
    if (server.env.DATABASE_URL) {
      // On PostgreSQL we can look: the dead server held runs mid-execution, leased; the restarted one must take them over.
      const db = postgres(server.env.DATABASE_URL, { max: 1, onnotice: () => {} });
      const [row] = await db`select count(*)::int as held from function_runs where status = 'running' and locked_until > now()`;
      await db.end();
      expect(row!.held).toBeGreaterThan(0);
    }

    const atKill = await onChain();
    const notLanded = second.filter((i) => !atKill.has(i.userOperationHash));
    expect(notLanded.length, "the kill came after every op had landed: nothing was in flight").toBeGreaterThanOrEqual(MINED_WHILE_DEAD + 1);

    // A bundle the dead server had sent gets mined after its death: we send it ourselves.
    const bundled = notLanded.slice(0, MINED_WHILE_DEAD);
    const wallet = await fundedWallet(31337);
    const data = encodeFunctionData({ abi: entryPointAbi, functionName: "handleOps", args: [bundled.map((i) => toEntryPointOp(deserializeUserOp(i.userOperation))), wallet.account.address] });
    const deadBundle = (await mined(31337, await wallet.sendTransaction({ to: ENTRY_POINT, data }))).transactionHash;

    await server.restart();
    const done = await landed(all.map((i) => i.id), 150_000);

    // Every intent succeeded, each op executed exactly once on chain, and nothing else did.
    for (const i of done) expect(i.response, i.id).toMatchObject({ status: 1 });
    const history = await entryPointHistory(31337, account.address, fromBlock);
    expect(Object.fromEntries(history.timesByHash)).toEqual(Object.fromEntries(all.map((i) => [i.userOperationHash, 1])));
    expect(history.operations).toHaveLength(N);
    expect(history.operations.every((op) => op.success)).toBe(true);
    expect(history.deposits).toBe(N);
    // The ops mined while the server was dead are recorded with that transaction, not sent again.
    const byId = new Map(done.map((i) => [i.id, i]));
    for (const i of bundled) expect(byId.get(i.id)!.response!.transactionHash).toBe(deadBundle);
    // The paymaster paid for all of it.
    const paymaster = deployment.userOperation.paymasterAndData!.slice(0, 42).toLowerCase();
    expect(history.operations.every((op) => op.paymaster!.toLowerCase() === paymaster)).toBe(true);
    expect(await clientOf(31337).getBalance({ address: account.address as Address })).toBe(0n);
    // The API agrees: no intent of the account failed.
    const failed = await api("GET", `/v1/transaction_intents?account[]=${account.id}&status=0`);
    expect(failed.total).toBe(0);
    const succeeded = await api("GET", `/v1/transaction_intents?account[]=${account.id}&status=1&limit=100`);
    expect(succeeded.total).toBe(N + 1);
  }, 300_000);
});
