import { randomUUID } from "node:crypto";
import { beforeAll, describe, expect, it } from "vitest";
import { getDb } from "@/lib/db/client";
import { transactionIntents } from "@/lib/db/schema";
import { isFinal, searchIntents } from "@/lib/intents/search";
import { describeRule } from "@/lib/policies/purposes";
import type { ProjectContext } from "@/lib/tenant";
import { newProject } from "./helpers/api";

type Status = (typeof transactionIntents.$inferInsert)["status"];

/** An intent row as the relay leaves it, written directly: the search reads only the table. */
async function intent(ctx: ProjectContext, status: Status, extra: Partial<typeof transactionIntents.$inferInsert> = {}) {
  const id = `tin_${randomUUID()}`;
  await (await getDb()).insert(transactionIntents).values({
    id,
    ...ctx,
    chainId: 31337,
    accountId: `acc_${randomUUID()}`,
    status,
    sponsored: false,
    interactions: [],
    userOperation: {},
    userOperationHash: `0x${randomUUID().replace(/-/g, "").padEnd(64, "0")}`,
    maxCost: "1",
    ...extra,
  });
  return id;
}

let test: ProjectContext;
const ids: Record<string, string> = {};

beforeAll(async () => {
  const project = await newProject("dashboard intents");
  test = { projectId: project.id, livemode: false };
  ids.awaiting = await intent(test, "awaiting_signature");
  ids.pending = await intent(test, "pending");
  ids.landed = await intent(test, "successful", { transactionHash: `0x${"ab".repeat(32)}`, blockNumber: 7 });
  ids.confirmed = await intent(test, "successful", { confirmedAt: new Date(), transactionHash: `0x${"cd".repeat(32)}` });
  ids.failed = await intent(test, "failed");
  ids.cancelled = await intent(test, "cancelled");
  // The same project's live mode and another project: never listed here.
  ids.live = await intent({ projectId: project.id, livemode: true }, "pending");
  ids.other = await intent({ projectId: (await newProject("someone else")).id, livemode: false }, "pending");
});

const search = async (input: Parameters<typeof searchIntents>[2]) => (await searchIntents(await getDb(), test, input)).rows.map((r) => r.id).sort();

describe("the dashboard's intent search", () => {
  it("lists the project and mode's intents only", async () => {
    const { rows, total } = await searchIntents(await getDb(), test, { limit: 100, skip: 0 });
    expect(total).toBe(6);
    expect(rows.map((r) => r.id)).not.toContain(ids.live);
    expect(rows.map((r) => r.id)).not.toContain(ids.other);
  });

  it("filters by state: broadcast is landed but unconfirmed, successful is confirmed", async () => {
    const page = { limit: 100, skip: 0 };
    expect(await search({ ...page, state: "broadcast" })).toEqual([ids.landed]);
    expect(await search({ ...page, state: "successful" })).toEqual([ids.confirmed]);
    expect(await search({ ...page, state: "awaiting_signature" })).toEqual([ids.awaiting]);
    expect(await search({ ...page, state: "cancelled" })).toEqual([ids.cancelled]);
  });

  it("finds an intent by a piece of its id or transaction hash, with LIKE's wildcards taken literally", async () => {
    const page = { limit: 100, skip: 0 };
    expect(await search({ ...page, q: ids.failed!.slice(4, 16) })).toEqual([ids.failed]);
    expect(await search({ ...page, q: "CDCDCD" })).toEqual([ids.confirmed]);
    expect(await search({ ...page, q: "%" })).toEqual([]);
  });

  it("knows which states can still change", () => {
    expect(isFinal({ status: "successful", confirmedAt: null })).toBe(false);
    expect(isFinal({ status: "successful", confirmedAt: new Date() })).toBe(true);
    expect(isFinal({ status: "pending", confirmedAt: null })).toBe(false);
    expect(isFinal({ status: "cancelled", confirmedAt: null })).toBe(true);
  });
});

describe("rules in words", () => {
  it("says what each of the five purposes does", () => {
    expect(describeRule({ type: "contract_functions", contract: { id: "con_1", name: "Sword" }, functionName: "mint" })).toBe("Sponsors calls to mint() of Sword.");
    expect(describeRule({ type: "contract_functions", wildcard: true, functionName: "All functions" })).toBe("Sponsors calls to any function of any contract.");
    expect(describeRule({ type: "account_functions" })).toMatch(/to itself/);
    expect(describeRule({ type: "rate_limit", functionName: "gas_per_transaction", gasLimit: "10000000000000000" })).toBe("Each transaction may cost at most 0.01 ETH in gas.");
    expect(describeRule({ type: "rate_limit", functionName: "gas_per_interval", gasLimit: "1000000000000000000", timeIntervalType: "day", timeIntervalValue: 1 }, "POL")).toBe(
      "Each player gets at most 1 POL of sponsored gas per day.",
    );
    expect(describeRule({ type: "rate_limit", functionName: "count_per_interval", countLimit: 1, timeIntervalType: "week", timeIntervalValue: 2 })).toBe("Each player gets at most 1 sponsored transaction per 2 weeks.");
  });
});
