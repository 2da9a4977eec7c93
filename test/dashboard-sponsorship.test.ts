import { parseEther } from "viem";
import { beforeAll, describe, expect, it } from "vitest";
import { budgetRows, budgetSubject, declinesByReason, ledgerFilters, monthOf, recentDays, spendPerDay, spendSeries, topSpenders } from "@/lib/dashboard/sponsorship";
import { getDb } from "@/lib/db/client";
import { players, sponsorshipDeclines, sponsorshipEntries } from "@/lib/db/schema";
import { newId } from "@/lib/ids";
import type { ProjectWithKeys } from "@/lib/projects/service";
import type { ProjectContext } from "@/lib/tenant";
import { sponsorshipClock } from "@/lib/sponsorship/budgets";
import { hold, releaseHold, settleHold } from "@/lib/sponsorship/ledger";
import { chainOf } from "./helpers/chain";
import { call, newProject } from "./helpers/api";

// The Sponsorship page's reads (lib/dashboard/sponsorship.ts). Spend, top spenders and declines read rows written
// directly at chosen instants (the reads see only the tables); budgets are made through the API and spent through the
// ledger's own hold and settle.

const NOW = new Date("2025-06-15T12:00:00Z");
const MILLI = parseEther("0.001");

/** A journal entry as the ledger writes it, at `at`. */
async function entry(
  ctx: ProjectContext,
  at: string,
  values: { chainId?: number; kind?: "settle" | "hold" | "release" | "credit" | "reversal"; cause?: "deposit"; amount: bigint; usd?: string | null; playerId?: string | null },
) {
  await (await getDb()).insert(sponsorshipEntries).values({
    id: newId("sponsorshipEntry"),
    ...ctx,
    chainId: values.chainId ?? 31337,
    kind: values.kind ?? "settle",
    amount: values.amount.toString(),
    usd: values.usd ?? null,
    cause: values.cause ?? (values.kind === "credit" ? "funding" : "intent"),
    playerId: values.playerId ?? null,
    createdAt: new Date(at),
  });
}

async function decline(ctx: ProjectContext, at: string, code: string) {
  await (await getDb()).insert(sponsorshipDeclines).values({ id: newId("sponsorshipDecline"), ...ctx, chainId: 31337, code, source: "intent", createdAt: new Date(at) });
}

async function player(ctx: ProjectContext, name: string | null) {
  const id = newId("player");
  await (await getDb()).insert(players).values({ id, ...ctx, name });
  return id;
}

let spend: ProjectContext;
let top: ProjectContext;
let other: ProjectContext;

beforeAll(async () => {
  const a = await newProject("dashboard spend");
  const b = await newProject("dashboard top spenders");
  spend = { projectId: a.id, livemode: false };
  top = { projectId: b.id, livemode: false };
  other = { projectId: (await newProject("someone else")).id, livemode: false };

  // Spend per day: the last 30 UTC days to 15 June 2025 are 17 May to 15 June, both whole.
  await entry(spend, "2025-06-14T23:59:59Z", { amount: MILLI, usd: "2.000000" });
  await entry(spend, "2025-06-15T00:00:00Z", { amount: 2n * MILLI, usd: "4.000000" });
  await entry(spend, "2025-06-15T11:00:00Z", { amount: MILLI / 2n, usd: null });
  await entry(spend, "2025-05-17T00:00:00Z", { chainId: 31338, amount: 10n * MILLI, usd: "20.000000" });
  // A settlement a reorg reversed the same day: nothing spent by it, and one operation fewer.
  await entry(spend, "2025-06-14T01:00:00Z", { amount: 4n * MILLI, usd: "8.000000" });
  await entry(spend, "2025-06-14T02:00:00Z", { kind: "reversal", amount: 4n * MILLI, usd: "8.000000" });
  // Not counted: a day too early, a later day, holds and releases and credits, live mode, another project.
  await entry(spend, "2025-05-16T23:59:59Z", { chainId: 31338, amount: 7n * MILLI, usd: "1.000000" });
  await entry(spend, "2025-06-16T00:00:00Z", { amount: 7n * MILLI });
  await entry(spend, "2025-06-10T00:00:00Z", { kind: "hold", amount: 7n * MILLI });
  await entry(spend, "2025-06-10T00:00:00Z", { kind: "release", amount: 7n * MILLI });
  await entry(spend, "2025-06-10T00:00:00Z", { kind: "credit", amount: 7n * MILLI });
  await entry(spend, "2025-06-10T00:00:00Z", { kind: "reversal", cause: "deposit", amount: 7n * MILLI });
  await entry({ ...spend, livemode: true }, "2025-06-10T00:00:00Z", { chainId: 31339, amount: 7n * MILLI });
  await entry(other, "2025-06-10T00:00:00Z", { amount: 7n * MILLI });

  // Declines: three budgets exhausted (one on the first day of the range), one balance; the rest outside.
  await decline(spend, "2025-05-17T00:00:00Z", "budget_exhausted");
  await decline(spend, "2025-06-01T00:00:00Z", "budget_exhausted");
  await decline(spend, "2025-06-15T09:00:00Z", "budget_exhausted");
  await decline(spend, "2025-06-15T10:00:00Z", "balance_insufficient");
  await decline(spend, "2025-05-16T23:59:59Z", "no_matching_rule");
  await decline({ ...spend, livemode: true }, "2025-06-15T10:00:00Z", "rate_limited");
  await decline(other, "2025-06-15T10:00:00Z", "rate_limited");
});

describe("spend per day", () => {
  it("sums the settlements per chain and UTC day of the last 30 days, in wei and in dollars when every one was priced", async () => {
    const report = await spendPerDay(await getDb(), spend, NOW);
    expect(report.from).toBe("2025-05-17");
    expect(report.to).toBe("2025-06-15");
    expect(report.chains.map((c) => c.chainId)).toEqual([31337, 31338]);
    const [local, second] = report.chains;
    expect(local!.days).toEqual([
      { day: "2025-06-14", wei: MILLI.toString(), usd: "2.000000", operations: 1 },
      // A settlement without a price leaves the day's dollars unknown rather than short.
      { day: "2025-06-15", wei: ((5n * MILLI) / 2n).toString(), usd: null, operations: 2 },
    ]);
    expect(local!.total).toEqual({ wei: ((7n * MILLI) / 2n).toString(), usd: null, operations: 3 });
    expect(local!.symbol).toBe("ETH");
    expect(second!.days).toEqual([{ day: "2025-05-17", wei: (10n * MILLI).toString(), usd: "20.000000", operations: 1 }]);
    expect(second!.total).toEqual({ wei: (10n * MILLI).toString(), usd: "20.000000", operations: 1 });
  });

  it("gives the chart every day of the range, zero where nothing settled", async () => {
    const report = await spendPerDay(await getDb(), spend, NOW);
    const points = spendSeries(report, report.chains[0]!);
    expect(points).toHaveLength(30);
    expect(points[0]).toEqual({ day: "2025-05-17", spent: 0, usd: null });
    expect(points.at(-2)).toEqual({ day: "2025-06-14", spent: 0.001, usd: null });
    expect(points.at(-1)).toEqual({ day: "2025-06-15", spent: 0.0025, usd: null });
    const priced = spendSeries(report, report.chains[1]!);
    expect(priced[0]).toEqual({ day: "2025-05-17", spent: 0.01, usd: 20 });
    expect(priced[1]).toEqual({ day: "2025-05-18", spent: 0, usd: 0 });
  });

  it("is empty for a mode or a project without settlements in the range", async () => {
    expect((await spendPerDay(await getDb(), { ...top, livemode: true }, NOW)).chains).toEqual([]);
    expect((await spendPerDay(await getDb(), spend, new Date("2025-08-01T00:00:00Z"))).chains).toEqual([]);
  });

  it("counts days in UTC: the range ends with today and starts 29 days before", () => {
    expect(recentDays(new Date("2025-03-01T00:00:00Z"))).toMatchObject({ from: "2025-01-31", to: "2025-03-01" });
    expect(recentDays(new Date("2025-03-01T23:59:59.999Z"))).toMatchObject({ from: "2025-01-31", to: "2025-03-01" });
    expect(monthOf(new Date("2024-12-31T23:59:59Z"))).toEqual({ month: "2024-12", start: new Date("2024-12-01T00:00:00Z"), end: new Date("2025-01-01T00:00:00Z") });
  });
});

describe("top spending players", () => {
  const ids = { alice: "", bob: "", nameless: "" };

  beforeAll(async () => {
    ids.alice = await player(top, "Alice");
    ids.bob = await player(top, "Bob");
    ids.nameless = await player(top, null);
    await entry(top, "2025-06-01T00:00:00Z", { amount: MILLI, usd: "2.000000", playerId: ids.alice });
    await entry(top, "2025-06-15T11:00:00Z", { amount: 2n * MILLI, usd: "4.000000", playerId: ids.alice });
    await entry(top, "2025-06-10T00:00:00Z", { amount: 5n * MILLI, usd: null, playerId: ids.bob });
    await entry(top, "2025-06-11T00:00:00Z", { amount: MILLI, usd: "2.000000", playerId: ids.nameless });
    await entry(top, "2025-06-12T00:00:00Z", { chainId: 31338, amount: MILLI, usd: "2.000000", playerId: ids.alice });
    // Not counted: no player, last month, next month, a hold, live mode, another project's.
    await entry(top, "2025-06-12T00:00:00Z", { amount: 100n * MILLI });
    await entry(top, "2025-05-31T23:59:59Z", { amount: 100n * MILLI, playerId: ids.nameless });
    await entry(top, "2025-07-01T00:00:00Z", { amount: 100n * MILLI, playerId: ids.nameless });
    await entry(top, "2025-06-12T00:00:00Z", { kind: "hold", amount: 100n * MILLI, playerId: ids.nameless });
    await entry({ ...top, livemode: true }, "2025-06-12T00:00:00Z", { chainId: 31339, amount: 100n * MILLI, playerId: ids.nameless });
    await entry(other, "2025-06-12T00:00:00Z", { amount: 100n * MILLI, playerId: ids.nameless });
  });

  it("ranks the players by what their operations cost this UTC month, per chain, with their names", async () => {
    const result = await topSpenders(await getDb(), top, NOW);
    expect(result.month).toBe("2025-06");
    expect(result.chains).toEqual([
      {
        chainId: 31337,
        players: [
          { player: { id: ids.bob, name: "Bob" }, wei: (5n * MILLI).toString(), usd: null, operations: 1 },
          { player: { id: ids.alice, name: "Alice" }, wei: (3n * MILLI).toString(), usd: "6.000000", operations: 2 },
          { player: { id: ids.nameless, name: null }, wei: MILLI.toString(), usd: "2.000000", operations: 1 },
        ],
      },
      { chainId: 31338, players: [{ player: { id: ids.alice, name: "Alice" }, wei: MILLI.toString(), usd: "2.000000", operations: 1 }] },
    ]);
  });

  it("keeps the top N of each chain", async () => {
    const result = await topSpenders(await getDb(), top, NOW, 2);
    expect(result.chains[0]!.players.map((p) => p.player.id)).toEqual([ids.bob, ids.alice]);
    expect(result.chains[1]!.players.map((p) => p.player.id)).toEqual([ids.alice]);
  });

  it("is empty in a month without settlements", async () => {
    expect((await topSpenders(await getDb(), top, new Date("2025-08-01T00:00:00Z"))).chains).toEqual([]);
  });
});

describe("declines by reason", () => {
  it("counts the last 30 days' refusals of the project and mode by code, most frequent first, with the latest", async () => {
    const result = await declinesByReason(await getDb(), spend, NOW);
    expect(result).toEqual({
      from: "2025-05-17",
      to: "2025-06-15",
      total: 4,
      reasons: [
        { code: "budget_exhausted", count: 3, lastAt: Date.parse("2025-06-15T09:00:00Z") / 1000 },
        { code: "balance_insufficient", count: 1, lastAt: Date.parse("2025-06-15T10:00:00Z") / 1000 },
      ],
    });
    expect((await declinesByReason(await getDb(), top, NOW)).reasons).toEqual([]);
  });
});

describe("budgets' use", () => {
  let project: ProjectWithKeys;
  let ctx: ProjectContext;
  const ids = { daily: "", perPlayer: "", perOperation: "", perAccount: "", weekly: "", policy: "", second: "" };
  const payer = { player: newId("player"), account: newId("account") };

  const post = async (path: string, json: Record<string, unknown>, key = project.keys.test.secret) => {
    const res = await call("POST", path, { key, json });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    return res.body.id as string;
  };

  beforeAll(async () => {
    project = await newProject("dashboard budgets");
    ctx = { projectId: project.id, livemode: false };
    ids.policy = await post("/v1/policies", { name: "Daily mints", chainId: 31337, strategy: { sponsorSchema: "pay_for_user" } });
    const budget = (fields: Record<string, unknown>, policy = ids.policy) => post("/v1/policy_rules", { policy, type: "budget", ...fields });
    await post("/v1/policy_rules", { policy: ids.policy, type: "account_functions" });
    ids.daily = await budget({ amount: MILLI.toString(), currency: "native", scope: "policy", period: "day" });
    ids.perPlayer = await budget({ amount: "2", currency: "usd", scope: "player", period: "month" });
    ids.perOperation = await budget({ amount: (MILLI / 2n).toString(), currency: "native", scope: "operation" });
    ids.perAccount = await budget({ amount: MILLI.toString(), currency: "native", scope: "account", period: "total" });
    ids.second = await post("/v1/policies", { name: "Second chain", chainId: 31338, strategy: { sponsorSchema: "pay_for_user" } });
    ids.weekly = await budget({ amount: MILLI.toString(), currency: "native", scope: "policy", period: "week" }, ids.second);
    // Not listed: a deleted policy's budget, live mode's, another project's.
    const gone = await post("/v1/policies", { name: "Gone", chainId: 31337, strategy: { sponsorSchema: "pay_for_user" } });
    await budget({ amount: "1", currency: "native", scope: "policy", period: "day" }, gone);
    expect((await call("DELETE", `/v1/policies/${gone}`, { key: project.keys.test.secret })).status).toBe(200);
    const livePolicy = await post("/v1/policies", { name: "Live", chainId: 31339, strategy: { sponsorSchema: "pay_for_user" } }, project.keys.live.secret);
    await post("/v1/policy_rules", { policy: livePolicy, type: "budget", amount: "1", currency: "native", scope: "policy", period: "day" }, project.keys.live.secret);
    const neighbour = await newProject("budget neighbour");
    const theirs = await post("/v1/policies", { name: "Theirs", chainId: 31337, strategy: { sponsorSchema: "pay_for_user" } }, neighbour.keys.test.secret);
    await post("/v1/policy_rules", { policy: theirs, type: "budget", amount: "1", currency: "native", scope: "policy", period: "day" }, neighbour.keys.test.secret);

    // Spent under the first policy: one landed (0.4 held, 0.3 settled), one in flight (0.1 held), one released.
    const db = await getDb();
    // Stamped with the chain's clock, as the service's holds are: the suite's other files move the shared chain's clock
    // ahead of the wall clock, and between the chain's midnight and the wall clock's a hold stamped by the wall clock
    // fell in the chain's previous day (both runs of a CI run near midnight failed so).
    const chainTime = await sponsorshipClock(chainOf(31337));
    const spent = { chainId: 31337, cause: "intent" as const, usdPrice: 2000, policyId: ids.policy, playerId: payer.player, accountId: payer.account, chainTime };
    const landed = await db.transaction((tx) => hold(tx, ctx, { ...spent, amount: (4n * MILLI) / 10n, intentId: newId("transactionIntent") }));
    await db.transaction((tx) => settleHold(tx, landed.id, (3n * MILLI) / 10n));
    await db.transaction((tx) => hold(tx, ctx, { ...spent, amount: MILLI / 10n, intentId: newId("transactionIntent") }));
    const dropped = await db.transaction((tx) => hold(tx, ctx, { ...spent, amount: (5n * MILLI) / 10n, intentId: newId("transactionIntent") }));
    await db.transaction((tx) => releaseHold(tx, dropped.id));
  });

  it("lists every budget of the mode's live policies, oldest policy first, with the policy's use in its period", async () => {
    const rows = await budgetRows(await getDb(), ctx);
    expect(rows.map((r) => r.rule)).toEqual([ids.daily, ids.perPlayer, ids.perOperation, ids.perAccount, ids.weekly]);
    const daily = rows[0]!;
    expect(daily).toMatchObject({
      policy: { id: ids.policy, name: "Daily mints", chainId: 31337, enabled: true },
      description: "This policy spends at most 0.001 ETH on sponsorship per day (UTC).",
      scope: "policy",
      period: "day",
      unit: "wei",
      symbol: "ETH",
      limit: MILLI.toString(),
      // Settled at what it cost, in flight at its most, released not at all.
      used: ((4n * MILLI) / 10n).toString(),
      remaining: ((6n * MILLI) / 10n).toString(),
      share: 0.4,
      subject: ids.policy,
    });
    // Resets at the next UTC midnight of the chain's clock.
    expect(daily.resetsAt! % 86_400).toBe(0);
    expect(daily.resetsAt! - daily.periodStart!).toBe(86_400);
    expect(daily.resetsAt! * 1000).toBeGreaterThan(Date.now());
    const weekly = rows[4]!;
    expect(weekly).toMatchObject({ policy: { id: ids.second, chainId: 31338 }, used: "0", remaining: MILLI.toString(), share: 0 });
    expect(weekly.resetsAt! - weekly.periodStart!).toBe(7 * 86_400);
    expect(new Date(weekly.periodStart! * 1000).getUTCDay()).toBe(1);
  });

  it("shows a per-player or per-account budget's use only for the player or account named", async () => {
    const db = await getDb();
    const [, perPlayer, perOperation, perAccount] = await budgetRows(db, ctx, { policy: ids.policy });
    expect(perPlayer).toMatchObject({ unit: "usd", limit: "2", used: null, remaining: null, share: null, subject: null });
    expect(new Date(perPlayer!.resetsAt! * 1000).getUTCDate()).toBe(1);
    // Per operation: all of it for each operation, and nothing to reset.
    expect(perOperation).toMatchObject({ used: null, remaining: (MILLI / 2n).toString(), resetsAt: null, share: null, description: "Each operation may cost at most 0.0005 ETH." });
    expect(perAccount).toMatchObject({ used: null, remaining: null, resetsAt: null });

    const named = await budgetRows(db, ctx, { policy: ids.policy, player: payer.player, account: payer.account });
    expect(named.map((r) => r.rule)).toEqual([ids.daily, ids.perPlayer, ids.perOperation, ids.perAccount]);
    // $2 a month per player: 0.4 milli-ETH at $2000 is $0.80.
    expect(named[1]).toMatchObject({ used: "0.800000", remaining: "1.200000", share: 0.4, subject: payer.player });
    expect(named[3]).toMatchObject({ used: ((4n * MILLI) / 10n).toString(), remaining: ((6n * MILLI) / 10n).toString(), share: 0.4, subject: payer.account, resetsAt: null });
    // Someone who spent nothing has all of it.
    const [, nobody] = await budgetRows(db, ctx, { policy: ids.policy, player: newId("player") });
    expect(nobody).toMatchObject({ used: "0.000000", remaining: "2.000000", share: 0 });
  });

  it("is empty for a policy of another project or mode, and for a project without budgets", async () => {
    const db = await getDb();
    expect(await budgetRows(db, { ...ctx, livemode: true }, { policy: ids.policy })).toEqual([]);
    expect(await budgetRows(db, other, { policy: ids.policy })).toEqual([]);
    expect(await budgetRows(db, spend)).toEqual([]);
  });

  it("takes a subject from the page's query only when it is a player's or account's id", () => {
    expect(budgetSubject({ player: "pla_1", account: "acc_2" })).toEqual({ player: "pla_1", account: "acc_2" });
    expect(budgetSubject({ account: "dac_3" })).toEqual({ player: undefined, account: "dac_3" });
    expect(budgetSubject({ player: "acc_1", account: "pla_2" })).toEqual({ player: undefined, account: undefined });
    expect(budgetSubject({ player: `pla_${"x".repeat(100)}` }).player).toBeUndefined();
  });
});

describe("the ledger's filters from the page's query", () => {
  it("keeps the API's filter names with a value, trimmed, the first of repeated ones", () => {
    expect(ledgerFilters({ chainId: "31337", kind: "settle", cause: "", player: "  pla_1 ", intent: ["tin_1", "tin_2"], skip: "20", q: "x" })).toEqual({
      chainId: "31337",
      kind: "settle",
      player: "pla_1",
      intent: "tin_1",
    });
  });
});
