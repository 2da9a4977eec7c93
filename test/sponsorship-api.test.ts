import { parseEther } from "viem";
import { afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { serviceDeployment } from "@/lib/chain/contracts";
import { getDb } from "@/lib/db/client";
import { takeRemoteCallsInTransactions } from "@/lib/db/transaction-guard";
import { newId } from "@/lib/ids";
import type { ProjectWithKeys } from "@/lib/projects/service";
import type { ProjectContext } from "@/lib/tenant";
import { credit, hold, releaseHold, settleHold } from "@/lib/sponsorship/ledger";
import { balanceResponse, entryResponse } from "@/lib/sponsorship/schema";
import { call, expectError, newProject } from "./helpers/api";

// Each remote call made inside a database transaction is recorded (lib/db/transaction-guard.ts): none may be.
process.env.TRANSACTION_GUARD = "1";

// The ledger's reads through HTTP: GET /v1/sponsorship/balances and GET /v1/sponsorship/ledger. The entries are made
// by the ledger's own functions (the intents' and ERC-7677's wiring has its own tests).

let a: ProjectWithKeys;
let b: ProjectWithKeys;
let ctx: ProjectContext;
const policy = newId("policy");
const player = newId("player");
const account = newId("account");
const intent = newId("transactionIntent");
const otherIntent = newId("transactionIntent");

afterEach(() => vi.unstubAllEnvs());

beforeAll(async () => {
  a = await newProject("ledger reader");
  b = await newProject("ledger neighbour");
  ctx = { projectId: a.id, livemode: false };
  const db = await getDb();
  // Entries in order (the ledger lists newest first): the local credit of 31337 comes with the first of them.
  await credit(db, ctx, { chainId: 31337, amount: parseEther("0.5"), cause: "funding", usdPrice: 2000, reference: "ops@build-host", note: "launch budget" });
  const held = await db.transaction((tx) =>
    hold(tx, ctx, { chainId: 31337, amount: parseEther("0.1"), cause: "intent", usdPrice: 2000, intentId: intent, policyId: policy, playerId: player, accountId: account }),
  );
  await db.transaction((tx) => settleHold(tx, held.id, parseEther("0.04")));
  const other = await db.transaction((tx) => hold(tx, ctx, { chainId: 31338, amount: parseEther("0.2"), cause: "intent", usdPrice: null, intentId: otherIntent, policyId: policy }));
  await db.transaction((tx) => releaseHold(tx, other.id));
  await credit(db, ctx, { chainId: 31338, amount: parseEther("0.3"), cause: "deposit", reference: `0x${"ab".repeat(32)}:3` });
  await credit(db, ctx, { chainId: 31338, amount: -parseEther("0.1"), cause: "correction", reference: "ops@build-host", note: "double credit" });
  // A live hold, still in flight.
  await db.transaction((tx) => hold(tx, ctx, { chainId: 31338, amount: parseEther("0.05"), cause: "erc7677", usdPrice: null, policyId: policy }));
});

const balances = async (key: string, query?: Record<string, unknown>) => {
  const res = await call("GET", "/v1/sponsorship/balances", { key, query });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  for (const item of res.body.data) balanceResponse.parse(item);
  return res.body;
};

const ledger = async (query: Record<string, unknown> = {}, key = a.keys.test.secret) => {
  const res = await call("GET", "/v1/sponsorship/ledger", { key, query });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  for (const item of res.body.data) entryResponse.parse(item);
  return res.body;
};

describe("GET /v1/sponsorship/balances", () => {
  it("lists the project's balance on every chain of the key's mode, in wei strings, with where to fund it", async () => {
    const { entryPoint, paymaster } = serviceDeployment();
    const body = await balances(a.keys.test.secret);
    expect(body).toMatchObject({ object: "list", url: "/v1/sponsorship/balances", start: 0, end: 2, total: 2 });
    expect(body.data.map((d: { chainId: number }) => d.chainId)).toEqual([31337, 31338]);
    const [first, second] = body.data;
    // 1 (the local test-mode credit) + 0.5 funded - 0.04 settled; USD has a test of its own.
    expect({ ...first, usd: undefined }).toEqual({
      object: "sponsorshipBalance",
      chainId: 31337,
      livemode: false,
      currency: "ETH",
      credited: parseEther("1.5").toString(),
      held: "0",
      settled: parseEther("0.04").toString(),
      available: parseEther("1.46").toString(),
      usd: undefined,
      entryPoint,
      paymaster,
    });
    // 1 + 0.3 deposited - 0.1 corrected, 0.05 held.
    expect(second).toMatchObject({ chainId: 31338, credited: parseEther("1.2").toString(), held: parseEther("0.05").toString(), settled: "0", available: parseEther("1.15").toString() });
  });

  it("shows USD at the chain's price now, and none where the chain has no price", async () => {
    vi.stubEnv("CHAIN_31337_USD_PRICE", "2500");
    // A price feed address where nothing answers: no price (lib/sponsorship/prices.ts).
    vi.stubEnv("CHAIN_31338_USD_AGGREGATOR", "0x000000000000000000000000000000000000dEaD");
    const [priced, unpriced] = (await balances(a.keys.test.secret)).data;
    expect(priced.usd).toEqual({ available: "3650.000000", held: "0.000000", settled: "100.000000" });
    expect(unpriced.usd).toBeNull();
  });

  it("takes one chain of the mode, and refuses another mode's chain or an unknown one with a 400", async () => {
    const body = await balances(a.keys.test.secret, { chainId: "31338" });
    expect(body.data.map((d: { chainId: number }) => d.chainId)).toEqual([31338]);
    const live = await call("GET", "/v1/sponsorship/balances", { key: a.keys.test.secret, query: { chainId: 31339 } });
    expect(expectError(live, 400, "invalid_request_error").details?.chainId?.message).toMatch(/not a test chain/);
    expect(expectError(await call("GET", "/v1/sponsorship/balances", { key: a.keys.test.secret, query: { chainId: 999 } }), 400).details?.chainId).toBeDefined();
    expect(expectError(await call("GET", "/v1/sponsorship/balances", { key: a.keys.test.secret, query: { chainId: "x" } }), 400).details?.chainId).toBeDefined();
    expect(expectError(await call("GET", "/v1/sponsorship/balances", { key: a.keys.test.secret, query: { limit: 5 } }), 400).details?.limit).toBeDefined();
  });

  it("is scoped to the key's project and mode: live starts at zero, a neighbour sees only its own", async () => {
    const live = await balances(a.keys.live.secret);
    expect(live.data).toEqual([expect.objectContaining({ chainId: 31339, livemode: true, credited: "0", held: "0", settled: "0", available: "0" })]);
    const neighbour = await balances(b.keys.test.secret);
    expect(neighbour.data.map((d: { credited: string }) => d.credited)).toEqual([parseEther("1").toString(), parseEther("1").toString()]);
  });

  it("takes a secret key only", async () => {
    expectError(await call("GET", "/v1/sponsorship/balances", { key: a.keys.test.publishable }), 403, "permission_error");
    expectError(await call("GET", "/v1/sponsorship/balances", {}), 401, "authentication_error");
    const post = await call("POST", "/v1/sponsorship/balances", { key: a.keys.test.secret, json: {} });
    expectError(post, 405);
  });
});

describe("GET /v1/sponsorship/ledger", () => {
  it("lists every entry newest first, with its amount, USD then, cause and ids", async () => {
    const body = await ledger();
    expect(body).toMatchObject({ object: "list", url: "/v1/sponsorship/ledger", start: 0, total: 11 });
    expect(body.data).toHaveLength(10); // the default page
    const all = [...body.data, ...(await ledger({ skip: 10 })).data];
    expect(all).toHaveLength(11);
    for (const e of all) expect(e.id).toMatch(/^sle_/);
    const created = all.map((e: { createdAt: number }) => e.createdAt);
    expect(created).toEqual([...created].sort((x, y) => y - x));

    const settle = all.find((e: { kind: string }) => e.kind === "settle");
    expect(settle).toEqual({
      id: expect.stringMatching(/^sle_/),
      object: "sponsorshipEntry",
      createdAt: expect.any(Number),
      livemode: false,
      chainId: 31337,
      kind: "settle",
      amount: parseEther("0.04").toString(),
      usd: expect.stringMatching(/^80(\.0+)?$/),
      cause: "intent",
      reference: null,
      note: null,
      hold: { id: expect.stringMatching(/^hld_/) },
      transactionIntent: { id: intent },
      sponsoredOperation: null,
      policy: { id: policy },
      player: { id: player },
      account: { id: account },
      reverses: null,
      blockNumber: null,
      blockHash: null,
    });
    const funding = all.find((e: { cause: string }) => e.cause === "funding");
    // Who credited stays the operator's; the note is for the developer.
    expect(funding).toMatchObject({ kind: "credit", amount: parseEther("0.5").toString(), usd: expect.stringMatching(/^1000(\.0+)?$/), note: "launch budget", reference: null, hold: null });
    expect(all.find((e: { cause: string }) => e.cause === "deposit")).toMatchObject({ kind: "credit", reference: `0x${"ab".repeat(32)}:3` });
    expect(all.find((e: { cause: string }) => e.cause === "correction")).toMatchObject({ kind: "debit", amount: parseEther("0.1").toString(), note: "double credit" });
    expect(all.filter((e: { cause: string }) => e.cause === "local_grant")).toHaveLength(2);
  });

  it("pages without overlap, in either order", async () => {
    const pages = [await ledger({ limit: 4 }), await ledger({ limit: 4, skip: 4 }), await ledger({ limit: 4, skip: 8 })];
    expect(pages.map((p) => [p.start, p.end, p.total])).toEqual([
      [0, 4, 11],
      [4, 8, 11],
      [8, 11, 11],
    ]);
    const ids = pages.flatMap((p) => p.data.map((e: { id: string }) => e.id));
    expect(new Set(ids).size).toBe(11);
    const asc = await ledger({ limit: 100, order: "asc" });
    expect(asc.data.map((e: { id: string }) => e.id)).toEqual([...ids].reverse());
    const past = await ledger({ skip: 50 });
    expect(past).toMatchObject({ start: 50, end: 50, total: 11, data: [] });
  });

  it("filters by chain, kind, cause, policy, player, account and intent", async () => {
    const kinds = (body: { data: { kind: string }[] }) => body.data.map((e) => e.kind).sort();
    expect((await ledger({ chainId: 31337 })).total).toBe(5);
    expect(kinds(await ledger({ chainId: 31337 }))).toEqual(["credit", "credit", "hold", "release", "settle"]);
    expect((await ledger({ kind: "hold" })).data.map((e: { amount: string }) => e.amount).sort()).toEqual(
      [parseEther("0.05"), parseEther("0.1"), parseEther("0.2")].map(String).sort(),
    );
    expect((await ledger({ cause: "funding" })).total).toBe(1);
    expect((await ledger({ cause: "erc7677" })).data).toEqual([expect.objectContaining({ kind: "hold", chainId: 31338, sponsoredOperation: null })]);
    expect((await ledger({ policy })).total).toBe(6);
    expect(kinds(await ledger({ player }))).toEqual(["hold", "release", "settle"]);
    expect((await ledger({ account })).total).toBe(3);
    expect(kinds(await ledger({ intent: otherIntent }))).toEqual(["hold", "release"]);
    // Filters combine.
    expect((await ledger({ chainId: 31338, kind: "hold", policy })).total).toBe(2);
    expect((await ledger({ intent, kind: "release" })).data).toEqual([expect.objectContaining({ amount: parseEther("0.06").toString() })]);
    expect((await ledger({ player: newId("player") })).total).toBe(0);
  });

  it("refuses bad filters with a 400 naming each", async () => {
    const bad = async (query: Record<string, unknown>, field: string, message?: RegExp) => {
      const res = await call("GET", "/v1/sponsorship/ledger", { key: a.keys.test.secret, query });
      const error = expectError(res, 400, "invalid_request_error");
      expect(error.details?.[field], JSON.stringify(error)).toBeDefined();
      if (message) expect(error.details?.[field]?.message).toMatch(message);
    };
    await bad({ kind: "refund" }, "kind", /credit, debit, hold, settle, release/);
    await bad({ cause: "gift" }, "cause", /funding/);
    await bad({ chainId: "abc" }, "chainId");
    await bad({ chainId: 999 }, "chainId", /unsupported/i);
    await bad({ chainId: 31339 }, "chainId", /not a test chain/);
    await bad({ policy: "afu_123" }, "policy", /pol_/);
    await bad({ player: "123" }, "player", /pla_/);
    await bad({ account: "pla_1" }, "account", /acc_/);
    await bad({ intent: "tin_" }, "intent", /tin_/);
    await bad({ limit: 0 }, "limit");
    await bad({ limit: 101 }, "limit");
    await bad({ order: "up" }, "order");
    await bad({ holder: "x" }, "holder");
  });

  it("is scoped to the key's project and mode", async () => {
    const neighbour = await ledger({}, b.keys.test.secret);
    expect(neighbour.data.every((e: { cause: string }) => e.cause === "local_grant")).toBe(true);
    expect((await ledger({ policy }, b.keys.test.secret)).total).toBe(0);
    expect((await ledger({ intent }, b.keys.test.secret)).total).toBe(0);
    expect((await ledger({}, a.keys.live.secret)).total).toBe(0);
  });

  it("takes a secret key only", async () => {
    expectError(await call("GET", "/v1/sponsorship/ledger", { key: a.keys.test.publishable }), 403, "permission_error");
    expectError(await call("GET", "/v1/sponsorship/ledger", { key: "sk_test_nope" }), 401, "authentication_error");
  });
});

describe("remote calls", () => {
  it("none ran inside a database transaction (prices and deposits are read before)", () => {
    expect(takeRemoteCallsInTransactions()).toEqual([]);
  });
});
