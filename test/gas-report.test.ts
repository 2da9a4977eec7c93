import { randomUUID } from "node:crypto";
import { afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { dailySeries, gasReport, gasReportQuery, reportRange } from "@/lib/dashboard/gas-report";
import { GAS_REPORT_CSV_HEADER, gasReportCsv } from "@/lib/dashboard/gas-report-csv";
import { getDb } from "@/lib/db/client";
import { policies, transactionIntents } from "@/lib/db/schema";
import { ApiError } from "@/lib/errors";
import { projectsOf, signUp } from "@/lib/developers/service";
import { createProject } from "@/lib/projects/service";
import type { ProjectContext } from "@/lib/tenant";

// The CSV route reads the dashboard session through next-auth; here the test says who is signed in.
const session = vi.hoisted(() => ({ current: null as { developerId: string } | null }));
vi.mock("next-auth", async (importOriginal) => ({ ...(await importOriginal<typeof import("next-auth")>()), getServerSession: async () => session.current }));

const NOW = new Date("2026-03-15T12:00:00Z");
const RANGE = { from: "2026-03-01", to: "2026-03-15" };
const ETH = 10n ** 18n;

async function policy(ctx: ProjectContext, chainId: number, name: string) {
  const id = `pol_${randomUUID()}`;
  await (await getDb()).insert(policies).values({ id, ...ctx, name, chainId, sponsorSchema: "pay_for_user" });
  return id;
}

/** A landed intent row as the relay leaves it (gas and fee set), written directly: the report reads only the table. */
async function intent(ctx: ProjectContext, chainId: number, policyId: string | null, createdAt: string, gasUsed: bigint | null, gasCost: bigint | null) {
  const id = `tin_${randomUUID()}`;
  await (await getDb()).insert(transactionIntents).values({
    id,
    ...ctx,
    chainId,
    accountId: `acc_${randomUUID()}`,
    policyId,
    status: gasCost === null ? "pending" : "successful",
    sponsored: policyId !== null,
    interactions: [],
    userOperation: {},
    userOperationHash: `0x${randomUUID().replace(/-/g, "").padEnd(64, "0")}`,
    maxCost: "1",
    gasUsed: gasUsed?.toString() ?? null,
    gasCost: gasCost?.toString() ?? null,
    createdAt: new Date(createdAt),
  });
  return id;
}

let developerId: string;
let outsiderId: string;
let test: ProjectContext;
let live: ProjectContext;
let other: ProjectContext;
const ids = { mints: "", swaps: "", livePolicy: "", otherPolicy: "" };

beforeAll(async () => {
  const db = await getDb();
  const stamp = randomUUID();
  const developer = await signUp(db, { email: `gas-${stamp}@example.com`, password: "a long enough password", organization: "Gas Co" });
  const outsider = await signUp(db, { email: `outsider-${stamp}@example.com`, password: "a long enough password" });
  developerId = developer.id;
  outsiderId = outsider.id;
  const project = await createProject(db, "Gas report project", (await projectsOf(db, developer.id))[0]!.organizationId);
  test = { projectId: project.id, livemode: false };
  live = { projectId: project.id, livemode: true };
  other = { projectId: (await createProject(db, "someone else's", (await projectsOf(db, outsider.id))[0]!.organizationId)).id, livemode: false };

  ids.mints = await policy(test, 31337, "Free mints");
  ids.swaps = await policy(test, 31338, "Swaps");
  ids.livePolicy = await policy(live, 31339, "Live mints");
  ids.otherPolicy = await policy(other, 31337, "Not yours");

  // Free mints: two on 10 March (the second a second before midnight UTC), one at midnight on the 11th.
  await intent(test, 31337, ids.mints, "2026-03-10T08:00:00Z", 100_000n, ETH / 1000n);
  await intent(test, 31337, ids.mints, "2026-03-10T23:59:59Z", 150_000n, (ETH / 1000n) * 2n);
  await intent(test, 31337, ids.mints, "2026-03-11T00:00:00Z", 50_000n, ETH / 2000n);
  // Not counted: not landed yet, before the range, not sponsored by any policy.
  await intent(test, 31337, ids.mints, "2026-03-11T09:00:00Z", null, null);
  await intent(test, 31337, ids.mints, "2026-02-28T23:59:59Z", 999_000n, ETH);
  await intent(test, 31337, null, "2026-03-10T10:00:00Z", 999_000n, ETH);
  // Swaps, on another chain of test mode.
  await intent(test, 31338, ids.swaps, "2026-03-12T10:00:00Z", 70_000n, ETH / 100n);
  // The same project's live mode, and another project: same days, never in these reports.
  await intent(live, 31339, ids.livePolicy, "2026-03-10T08:00:00Z", 123_000n, ETH / 10n);
  await intent(other, 31337, ids.otherPolicy, "2026-03-10T08:00:00Z", 321_000n, ETH / 5n);
});

afterEach(() => {
  delete process.env.CHAIN_31337_USD_PRICE;
  session.current = null;
});

const report = async (ctx: ProjectContext, query: { policy?: string; from?: string; to?: string }) => gasReport(await getDb(), ctx, { ...RANGE, ...query }, NOW);

async function refusal(promise: Promise<unknown>) {
  const err = await promise.then(
    () => null,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(ApiError);
  return err as ApiError;
}

describe("gas report aggregation", () => {
  it("sums one policy's landed intents per UTC creation day, with totals", async () => {
    const r = await report(test, { policy: ids.mints });
    expect(r).toMatchObject({ from: "2026-03-01", to: "2026-03-15", policy: { id: ids.mints, name: "Free mints" } });
    expect(r.chains).toHaveLength(1);
    const [chain] = r.chains;
    expect(chain).toMatchObject({ chainId: 31337, symbol: "ETH" });
    expect(chain!.days).toEqual([
      { day: "2026-03-10", intents: 2, gasUsed: "250000", feeWei: (3n * (ETH / 1000n)).toString(), feeNative: "0.003", feeUsd: null },
      { day: "2026-03-11", intents: 1, gasUsed: "50000", feeWei: (ETH / 2000n).toString(), feeNative: "0.0005", feeUsd: null },
    ]);
    expect(chain!.totals).toEqual({ intents: 3, gasUsed: "300000", feeWei: "3500000000000000", feeNative: "0.0035", feeUsd: null });
  });

  it("reports every policy of the project and mode together, one entry a chain", async () => {
    const r = await report(test, {});
    expect(r.policy).toBeNull();
    expect(r.chains.map((c) => [c.chainId, c.totals.intents, c.totals.feeNative])).toEqual([
      [31337, 3, "0.0035"],
      [31338, 1, "0.01"],
    ]);
  });

  it("gives USD amounts at the chain's configured price, and none for an unpriced chain", async () => {
    process.env.CHAIN_31337_USD_PRICE = "2000";
    const r = await report(test, {});
    expect(r.chains[0]!.days.map((d) => d.feeUsd)).toEqual(["6.000000", "1.000000"]);
    expect(r.chains[0]!.totals.feeUsd).toBe("7.000000");
    expect(r.chains[1]!.totals.feeUsd).toBeNull();
  });

  it("narrows to the range's days, both ends included", async () => {
    expect((await report(test, { policy: ids.mints, from: "2026-03-11", to: "2026-03-11" })).chains[0]!.totals).toMatchObject({ intents: 1, gasUsed: "50000" });
    expect((await report(test, { policy: ids.mints, from: "2026-02-28", to: "2026-03-10" })).chains[0]!.days.map((d) => d.day)).toEqual(["2026-02-28", "2026-03-10"]);
    expect((await report(test, { from: "2026-03-13", to: "2026-03-15" })).chains).toEqual([]);
  });

  it("fills the chart's days without intents with zeros", async () => {
    const r = await report(test, { policy: ids.mints, from: "2026-03-09", to: "2026-03-12" });
    expect(dailySeries(r, r.chains[0]!)).toEqual([
      { day: "2026-03-09", fee: 0, gasUsed: 0 },
      { day: "2026-03-10", fee: 0.003, gasUsed: 250_000 },
      { day: "2026-03-11", fee: 0.0005, gasUsed: 50_000 },
      { day: "2026-03-12", fee: 0, gasUsed: 0 },
    ]);
  });
});

describe("gas report separation", () => {
  it("keeps test and live apart", async () => {
    const liveReport = await report(live, {});
    expect(liveReport.chains.map((c) => [c.chainId, c.totals.intents, c.totals.gasUsed])).toEqual([[31339, 1, "123000"]]);
    expect((await report(test, {})).chains.map((c) => c.chainId)).not.toContain(31339);
    // A test policy named in live mode is unknown there, and the other way round.
    expect((await refusal(report(live, { policy: ids.mints }))).status).toBe(400);
    expect((await refusal(report(test, { policy: ids.livePolicy }))).status).toBe(400);
  });

  it("never shows another project's gas, even by its policy id", async () => {
    const all = await report(test, {});
    expect(all.chains.find((c) => c.chainId === 31337)!.totals.gasUsed).toBe("300000");
    const err = await refusal(report(test, { policy: ids.otherPolicy }));
    expect(err.status).toBe(400);
    expect(err.message).toContain(ids.otherPolicy);
  });
});

describe("gas report range", () => {
  it("defaults to the last 30 days, today included", () => {
    expect(reportRange({}, NOW)).toEqual({ from: "2026-02-14", to: "2026-03-15" });
    expect(reportRange({ to: "2026-01-30" }, NOW)).toEqual({ from: "2026-01-01", to: "2026-01-30" });
    expect(reportRange({ from: "2026-03-01" }, NOW)).toEqual({ from: "2026-03-01", to: "2026-03-15" });
  });

  it("refuses a start after the end, more than 366 days, and what is not a date", () => {
    const refused = (query: { from?: string; to?: string }) => {
      try {
        reportRange(query, NOW);
      } catch (err) {
        expect(err).toBeInstanceOf(ApiError);
        expect((err as ApiError).status).toBe(400);
        return (err as ApiError).message;
      }
      throw new Error(`accepted ${JSON.stringify(query)}`);
    };
    expect(refused({ from: "2026-03-02", to: "2026-03-01" })).toBe("The date range starts (2026-03-02) after it ends (2026-03-01): pick a start on or before the end.");
    expect(reportRange({ from: "2025-03-15", to: "2026-03-15" }, NOW)).toEqual({ from: "2025-03-15", to: "2026-03-15" }); // 366 days
    expect(refused({ from: "2025-03-14", to: "2026-03-15" })).toMatch(/covers 367 days; a report covers at most 366/);
    expect(refused({ from: "2026-02-30" })).toBe("The from date '2026-02-30' is not a date written as YYYY-MM-DD.");
    expect(refused({ to: "yesterday" })).toMatch(/The to date 'yesterday'/);
    expect(refused({ from: "2026-3-1" })).toMatch(/YYYY-MM-DD/);
  });

  it("reads the filters from a query string, empty fields as defaults", () => {
    expect(gasReportQuery(new URLSearchParams("policy=&from=2026-03-01&to="))).toEqual({ policy: undefined, from: "2026-03-01", to: undefined });
    expect(gasReportQuery({ policy: ["pol_a", "pol_b"], from: undefined })).toEqual({ policy: "pol_a", from: undefined, to: undefined });
  });
});

describe("gas report CSV", () => {
  it("has a header and a line a day and chain, USD empty when unpriced", async () => {
    process.env.CHAIN_31337_USD_PRICE = "2000";
    const csv = gasReportCsv(await report(test, {}));
    expect(csv.split("\r\n")).toEqual([
      GAS_REPORT_CSV_HEADER.join(","),
      "2026-03-10,31337,ETH,2,250000,3000000000000000,0.003,6.000000",
      "2026-03-11,31337,ETH,1,50000,500000000000000,0.0005,1.000000",
      "2026-03-12,31338,ETH,1,70000,10000000000000000,0.01,",
      "",
    ]);
    expect(GAS_REPORT_CSV_HEADER.join(",")).toBe("date,chain_id,symbol,intents,gas_used,fee_wei,fee_native,fee_usd");
  });

  it("quotes a configured symbol CSV would misread", () => {
    const csv = gasReportCsv({
      from: "2026-03-01",
      to: "2026-03-01",
      policy: null,
      chains: [{ chainId: 1, name: "x", symbol: 'E,"H', days: [{ day: "2026-03-01", intents: 1, gasUsed: "1", feeWei: "1", feeNative: "0.000000000000000001", feeUsd: null }], totals: { intents: 1, gasUsed: "1", feeWei: "1", feeNative: "0.000000000000000001", feeUsd: null } }],
    });
    expect(csv.split("\r\n")[1]).toBe('2026-03-01,1,"E,""H",1,1,1,0.000000000000000001,');
  });
});

describe("the CSV download route", () => {
  const download = async (projectId: string, query: string, mode = "test") => {
    const { GET } = await import("@/app/(dashboard)/projects/[projectId]/[mode]/reports/csv/route");
    return GET(new Request(`http://127.0.0.1:3000/projects/${projectId}/${mode}/reports/csv?${query}`), { params: Promise.resolve({ projectId, mode }) });
  };
  const errorOf = async (res: Response, status: number, type: string) => {
    expect(res.status).toBe(status);
    expect(res.headers.get("content-type")).toMatch(/^application\/json/);
    const body = (await res.json()) as { error: { type: string; message: string } };
    expect(body.error.type).toBe(type);
    expect(body.error.message).toEqual(expect.any(String));
    return body.error;
  };

  it("answers the signed-in developer with an attachment", async () => {
    session.current = { developerId };
    const res = await download(test.projectId, `policy=${ids.mints}&from=2026-03-01&to=2026-03-15`);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("text/csv; charset=utf-8");
    expect(res.headers.get("content-disposition")).toBe(`attachment; filename="gas-report-${ids.mints}-2026-03-01-to-2026-03-15.csv"`);
    const lines = (await res.text()).split("\r\n");
    expect(lines[0]).toBe(GAS_REPORT_CSV_HEADER.join(","));
    expect(lines.slice(1, 3).map((l) => l.split(",").slice(0, 5).join(","))).toEqual(["2026-03-10,31337,ETH,2,250000", "2026-03-11,31337,ETH,1,50000"]);
  });

  it("is 401 signed out, 404 for another developer's project or a bad mode, 400 for a bad range or policy", async () => {
    const signedOut = await download(test.projectId, "");
    // A 401 names a challenge (RFC 9110); the dashboard's cookie has no standard scheme, so it names its own.
    expect(signedOut.headers.get("www-authenticate")).toBe('Session realm="dashboard"');
    await errorOf(signedOut, 401, "authentication_error");
    session.current = { developerId: outsiderId };
    await errorOf(await download(test.projectId, ""), 404, "invalid_request_error");
    session.current = { developerId };
    await errorOf(await download(test.projectId, "", "staging"), 404, "invalid_request_error");
    expect((await errorOf(await download(test.projectId, "from=2026-03-02&to=2026-03-01"), 400, "invalid_request_error")).message).toMatch(/after it ends/);
    expect((await errorOf(await download(test.projectId, "from=not-a-date"), 400, "invalid_request_error")).message).toMatch(/YYYY-MM-DD/);
    await errorOf(await download(test.projectId, `policy=${ids.otherPolicy}`), 400, "invalid_request_error");
  });
});
