import http from "node:http";
import { formatEther, parseEther } from "viem";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { GET as metricsRoute } from "@/app/metrics/route";
import { GET as readyRoute } from "@/app/readyz/route";
import { entryPointAbi } from "@/contracts/artifacts";
import { ourPaymasters } from "@/lib/chain/contracts";
import { findChain } from "@/lib/chain/registry";
import { getDb } from "@/lib/db/client";
import { takeRemoteCallsInTransactions } from "@/lib/db/transaction-guard";
import type { ProjectContext } from "@/lib/tenant";
import { credit, hold, settleHold } from "@/lib/sponsorship/ledger";
import { newProject } from "./helpers/api";
import { clientOf } from "./helpers/chain";
import { runInProcessOnly } from "./helpers/relay-fixtures";

// Each remote call made inside a database transaction is recorded (lib/db/transaction-guard.ts): none may be.
process.env.TRANSACTION_GUARD = "1";

// The operator's signals of the ledger: per chain, a /metrics gauge of our paymaster's deposit and of every
// project's balance, and /readyz degraded when the deposit no longer covers the balances.

/**
 * A chain configured by RPC URL alone for this file: the 31337 node behind an id nobody else uses (so its balances are
 * this test's, whatever other test files run at the same time on a shared database), reached through a proxy that
 * counts the node's calls.
 */
const OWN_CHAIN = 31351;
const saved = process.env[`CHAIN_${OWN_CHAIN}_RPC_URL`];
let proxy: http.Server;
const calls: string[] = [];
let ctx: ProjectContext;

beforeAll(async () => {
  const upstream = process.env.CHAIN_31337_RPC_URL!;
  proxy = http.createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const body = Buffer.concat(chunks).toString();
    const parsed = JSON.parse(body) as { method: string } | { method: string }[];
    for (const item of Array.isArray(parsed) ? parsed : [parsed]) calls.push(item.method);
    const answer = await fetch(upstream, { method: "POST", headers: { "content-type": "application/json" }, body });
    res.writeHead(answer.status, { "content-type": "application/json" });
    res.end(await answer.text());
  });
  await new Promise<void>((resolve) => proxy.listen(0, "127.0.0.1", resolve));
  process.env[`CHAIN_${OWN_CHAIN}_RPC_URL`] = `http://127.0.0.1:${(proxy.address() as { port: number }).port}`;
  // A runner that leases (readiness checks it), running nothing.
  await runInProcessOnly();
  const project = await newProject("operator signals");
  ctx = { projectId: project.id, livemode: true };
});

afterAll(async () => {
  if (saved === undefined) delete process.env[`CHAIN_${OWN_CHAIN}_RPC_URL`];
  else process.env[`CHAIN_${OWN_CHAIN}_RPC_URL`] = saved;
  await new Promise((resolve) => proxy.close(resolve));
});

/** Our paymasters' deposits (v0.6 and v0.8, each at its EntryPoint) summed: what covers a chain's balances. */
const deposit = async () => {
  let sum = 0n;
  for (const { entryPoint, paymaster } of ourPaymasters(findChain(31337)!)) {
    sum += await clientOf(31337).readContract({ address: entryPoint, abi: entryPointAbi, functionName: "balanceOf", args: [paymaster] });
  }
  return sum;
};

const scrape = async () => {
  const res = await metricsRoute(new Request("http://127.0.0.1:3000/metrics", { headers: { "x-forwarded-for": "127.0.0.1" } }));
  expect(res.status).toBe(200);
  return res.text();
};

const gauge = (text: string, name: string, chain: number) => {
  const match = new RegExp(`^${name}\\{chain="${chain}"\\} (\\S+)$`, "m").exec(text);
  return match ? Number(match[1]) : undefined;
};

const ready = async () => {
  await new Promise((r) => setTimeout(r, 1100)); // past the cached answer of an earlier probe
  const res = await readyRoute();
  return { status: res.status, body: await res.json() };
};

const eth = (wei: bigint) => Number(formatEther(wei));

describe("the paymaster deposit against the projects' balances", () => {
  it("is a /metrics gauge per chain: the deposit, the sum of available + held, and whether it is covered", async () => {
    const db = await getDb();
    await credit(db, ctx, { chainId: OWN_CHAIN, amount: parseEther("2"), cause: "funding", reference: "test" });
    const held = await db.transaction((tx) => hold(tx, ctx, { chainId: OWN_CHAIN, amount: parseEther("0.5"), cause: "intent", usdPrice: null }));
    await db.transaction((tx) => settleHold(tx, held.id, parseEther("0.2")));
    await db.transaction((tx) => hold(tx, ctx, { chainId: OWN_CHAIN, amount: parseEther("0.3"), cause: "erc7677", usdPrice: null }));

    const onChain = await deposit();
    const text = await scrape();
    expect(text).toContain("# TYPE sponsorship_paymaster_deposit_wei gauge");
    // 2 credited - 0.2 settled: 1.5 available and 0.3 held.
    expect(gauge(text, "sponsorship_project_balances_wei", OWN_CHAIN)).toBe(Number(parseEther("1.8")));
    // The deposit as read at most a cache period ago (other test files' operations may spend from it meanwhile).
    expect(Math.abs(eth(BigInt(gauge(text, "sponsorship_paymaster_deposit_wei", OWN_CHAIN)!)) - eth(onChain))).toBeLessThan(1);
    expect(gauge(text, "sponsorship_deposit_covered", OWN_CHAIN)).toBe(1);
    for (const chain of [31337, 31338, 31339]) {
      expect(gauge(text, "sponsorship_paymaster_deposit_wei", chain)).toBeGreaterThan(0);
      expect(gauge(text, "sponsorship_project_balances_wei", chain)).toBeGreaterThanOrEqual(0);
    }
  });

  it("reads each chain's deposit once per cache period, however many scrapes and probes come at once", async () => {
    process.env.SPONSORSHIP_DEPOSIT_CACHE_SECONDS = "2";
    try {
      await scrape();
      await new Promise((r) => setTimeout(r, 2100)); // the deposit read is now older than the cache period
      calls.length = 0;
      await Promise.all([...Array.from({ length: 10 }, () => scrape()), readyRoute(), readyRoute()]);
      // One balanceOf per paymaster (v0.6, v0.8) for the whole burst; readiness asks the node for its block besides.
      expect(calls.filter((m) => m === "eth_call")).toEqual(["eth_call", "eth_call"]);
      calls.length = 0;
      await Promise.all(Array.from({ length: 10 }, () => scrape()));
      expect(calls).toEqual([]);
    } finally {
      delete process.env.SPONSORSHIP_DEPOSIT_CACHE_SECONDS;
    }
  });

  it("makes /readyz degraded (still 200) while the deposit does not cover them, naming the chain, and ready again once it does", async () => {
    const before = await ready();
    expect(before.status).toBe(200);
    expect(before.body).toMatchObject({ status: "ready", checks: { sponsorship: { ok: true, uncovered: [] } } });

    const db = await getDb();
    const over = (await deposit()) + parseEther("10");
    await credit(db, ctx, { chainId: OWN_CHAIN, amount: over, cause: "funding", reference: "test" });
    const short = await ready();
    expect(short.status).toBe(200);
    expect(short.body).toMatchObject({ status: "degraded", checks: { sponsorship: { ok: false, uncovered: [String(OWN_CHAIN)] }, database: { ok: true } } });
    // The amounts stay out of the public probe: /metrics and the CLI show them.
    expect(JSON.stringify(short.body)).not.toContain(over.toString());
    expect(gauge(await scrape(), "sponsorship_deposit_covered", OWN_CHAIN)).toBe(0);

    await credit(db, ctx, { chainId: OWN_CHAIN, amount: -over, cause: "correction", reference: "test", note: "test over" });
    expect((await ready()).body).toMatchObject({ status: "ready", checks: { sponsorship: { ok: true } } });
    expect(gauge(await scrape(), "sponsorship_deposit_covered", OWN_CHAIN)).toBe(1);
  });

  it("leaves a chain whose deposit cannot be read out of the verdict (the chain check says it is down)", async () => {
    process.env[`CHAIN_${OWN_CHAIN}_RPC_URL`] = "http://127.0.0.1:9/down";
    try {
      const down = await ready();
      expect(down.status).toBe(503);
      expect(down.body).toMatchObject({ status: "not_ready", checks: { chains: { [String(OWN_CHAIN)]: { ok: false } }, sponsorship: { ok: true, uncovered: [] } } });
      const text = await scrape();
      expect(gauge(text, "sponsorship_paymaster_deposit_wei", OWN_CHAIN)).toBeUndefined();
      expect(gauge(text, "sponsorship_deposit_covered", OWN_CHAIN)).toBeUndefined();
      expect(gauge(text, "sponsorship_project_balances_wei", OWN_CHAIN)).toBe(Number(parseEther("1.8")));
    } finally {
      process.env[`CHAIN_${OWN_CHAIN}_RPC_URL`] = `http://127.0.0.1:${(proxy.address() as { port: number }).port}`;
    }
  });
});

describe("remote calls", () => {
  it("none ran inside a database transaction (prices and deposits are read before)", () => {
    expect(takeRemoteCallsInTransactions()).toEqual([]);
  });
});
