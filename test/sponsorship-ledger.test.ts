// The sponsorship ledger under sponsored intents: holds taken atomically before signing, settled at the landed op's
// actualGasCost, released once our paymaster's signature can no longer land; live mode starts at zero.
import { and, eq, inArray } from "drizzle-orm";
import { parseEventLogs, toHex, type Hex } from "viem";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { entryPointAbi } from "@/contracts/artifacts";
import { serviceDeployment } from "@/lib/chain/contracts";
import { getDb } from "@/lib/db/client";
import { sponsorshipEntries, sponsorshipHolds } from "@/lib/db/schema";
import { cancelUnsigned, failIntent, landIntent } from "@/lib/intents/land-intent";
import { SPONSORSHIP_SECONDS } from "@/lib/paymasters/sponsor";
import { balanceOf, credit, localCredit } from "@/lib/sponsorship/ledger";
import { call, expectError, newProject } from "./helpers/api";
import { clientOf } from "./helpers/chain";
import { followed } from "./helpers/follow";
import { intentRow, runInProcessOnly } from "./helpers/relay-fixtures";

type Project = Awaited<ReturnType<typeof newProject>>;

/** A project with a policy sponsoring EntryPoint.depositTo on `chainId`, and a deployed account to call it from. */
async function sponsoring(project: Project, mode: "test" | "live", chainId: number) {
  const key = project.keys[mode].secret;
  const ctx = { projectId: project.id, livemode: mode === "live" };
  const abi = entryPointAbi.filter((i) => i.type === "function" && i.name === "depositTo");
  const contract = (await call("POST", "/v1/contracts", { key, json: { name: "EntryPoint", chainId, address: serviceDeployment().entryPoint, abi } })).body;
  const policy = (await call("POST", "/v1/policies", { key, json: { name: "deposits", chainId, strategy: { sponsorSchema: "pay_for_user" } } })).body;
  await call("POST", "/v1/policy_rules", { key, json: { policy: policy.id, type: "contract_functions", contract: contract.id, functionName: "depositTo" } });
  const intent = (json: Record<string, unknown> = {}) =>
    call("POST", "/v1/transaction_intents", {
      key,
      json: { chainId, policy: policy.id, interactions: [{ contract: contract.id, functionName: "depositTo", functionArgs: [serviceDeployment().paymaster] }], ...json },
    });
  return { key, ctx, policy: policy.id as string, intent };
}

/** actualGasCost of each op (by hash) from the chain's UserOperationEvents. */
async function actualCosts(chainId: number, hashes: Hex[]): Promise<Map<Hex, bigint>> {
  const client = clientOf(chainId);
  const logs = await client.getLogs({ address: serviceDeployment().entryPoint, fromBlock: 0n, toBlock: "latest" });
  const costs = new Map<Hex, bigint>();
  for (const event of parseEventLogs({ abi: entryPointAbi, logs, eventName: "UserOperationEvent" })) {
    const args = event.args as { userOpHash: Hex; actualGasCost: bigint };
    if (hashes.includes(args.userOpHash)) costs.set(args.userOpHash, args.actualGasCost);
  }
  return costs;
}

const sum = (values: Iterable<bigint>) => [...values].reduce((a, b) => a + b, 0n);

beforeAll(async () => {
  vi.stubEnv("RATE_LIMIT_PER_SECOND", "0");
  // No relay running: intents stay pending until the test lands them, so what is held is decided by holds alone.
  await runInProcessOnly();
});
afterAll(() => vi.unstubAllEnvs());

describe("sponsorship ledger", () => {
  it("a test-mode project on a local chain starts with the local credit, recorded once in its journal", async () => {
    const project = await newProject("ledger grant");
    const ctx = { projectId: project.id, livemode: false };
    const db = await getDb();
    const [first, again] = [await balanceOf(db, ctx, 31337), await balanceOf(db, ctx, 31337)];
    expect(first).toMatchObject({ credited: localCredit(), held: 0n, settled: 0n, available: localCredit() });
    expect(again).toEqual(first);
    const grants = await db.select().from(sponsorshipEntries).where(and(eq(sponsorshipEntries.projectId, project.id), eq(sponsorshipEntries.cause, "local_grant")));
    expect(grants).toHaveLength(1);
    // Live mode starts at zero, on every chain.
    expect(await balanceOf(db, { projectId: project.id, livemode: true }, 31339)).toMatchObject({ credited: 0n, available: 0n });
  });

  it("50 concurrent intents against a balance that covers some: exactly those that fit are held, the rest declined 402; landed ops settle at their actualGasCost", async () => {
    const project = await newProject("ledger burst");
    const s = await sponsoring(project, "test", 31337);
    const db = await getDb();
    // A first intent deploys the account and shows what one op holds.
    const first = await s.intent();
    expect(first.status, JSON.stringify(first.body)).toBe(200);
    expect(await landIntent(db, first.body.id)).toBe("landed");
    const account = first.body.account.id as string;
    const probe = await s.intent({ account });
    const [probeHold] = await db.select().from(sponsorshipHolds).where(eq(sponsorshipHolds.intentId, probe.body.id));
    const perOp = BigInt(probeHold!.amount);
    expect(perOp).toBe(BigInt((await intentRow(probe.body.id)).maxCost!));
    // Failed, its signed op could still land (anyone holding it may send it): its hold stays, within the balance.
    await failIntent(db, probe.body.id, "probe only");
    // Leave room for 12.5 ops.
    const before = await balanceOf(db, s.ctx, 31337);
    const target = perOp * 12n + perOp / 2n;
    await credit(db, s.ctx, { chainId: 31337, amount: target - before.available, cause: "correction", note: "test: leave 12.5 ops" });
    expect((await balanceOf(db, s.ctx, 31337)).available).toBe(target);

    const answers = await Promise.all(Array.from({ length: 50 }, () => s.intent({ account })));
    const accepted = answers.filter((a) => a.status === 200);
    const refused = answers.filter((a) => a.status !== 200);
    // Each op holds its own most cost (they differ by a few bytes of calldata gas): as many as fit are held, and what is
    // left could not hold another.
    const ids = accepted.map((a) => a.body.id as string);
    const burstHolds = await db.select().from(sponsorshipHolds).where(inArray(sponsorshipHolds.intentId, ids));
    const amounts = burstHolds.map((h) => BigInt(h.amount));
    const heldTotal = sum(amounts);
    const largest = amounts.reduce((a, b) => (a > b ? a : b));
    expect(heldTotal).toBeLessThanOrEqual(target);
    expect(target - heldTotal).toBeLessThan((largest * 101n) / 100n);
    expect(accepted.length).toBeGreaterThanOrEqual(12);
    expect(refused.length).toBe(50 - accepted.length);
    expect(refused.length).toBeGreaterThan(0);
    for (const res of refused) {
      expectError(res, 402, "sponsorship_declined");
      expect(res.body.error.code).toBe("balance_insufficient");
      expect(res.body.error.details).toMatchObject({ policy: s.policy });
    }
    const mid = await balanceOf(db, s.ctx, 31337);
    expect(mid.held).toBe(heldTotal + perOp);
    expect(mid.available).toBe(target - heldTotal);

    // Landed: each hold settles at what the chain says its op cost; the rest goes back.
    for (const res of accepted) expect(await landIntent(db, res.body.id)).toBe("landed");
    const hashes = accepted.map((a) => a.body.userOperationHash as Hex);
    const costs = await actualCosts(31337, hashes);
    expect(costs.size).toBe(accepted.length);
    const after = await balanceOf(db, s.ctx, 31337);
    expect(after.held).toBe(perOp);
    const settles = await db.select().from(sponsorshipEntries).where(and(inArray(sponsorshipEntries.intentId, ids), eq(sponsorshipEntries.kind, "settle")));
    expect(settles).toHaveLength(accepted.length);
    expect(sum(settles.map((e) => BigInt(e.amount)))).toBe(sum(costs.values()));
    expect(after.available).toBe(target - sum(costs.values()));
    // The journal explains the balance: credits - debits - settled - held.
    const entries = await db.select().from(sponsorshipEntries).where(and(eq(sponsorshipEntries.projectId, project.id), eq(sponsorshipEntries.chainId, 31337)));
    const total = (kind: string) => sum(entries.filter((e) => e.kind === kind).map((e) => BigInt(e.amount)));
    expect(total("credit") - total("debit")).toBe(after.credited);
    expect(total("settle")).toBe(after.settled);
    expect(total("hold") - total("release") - total("settle")).toBe(after.held);
    // Settling again (a retried relay step) counts nothing twice.
    for (const id of ids.slice(0, 3)) expect(await landIntent(db, id)).toBe("landed");
    expect(await balanceOf(db, s.ctx, 31337)).toEqual(after);
  }, 120_000);

  // On the live chain 31339, whose clock tests move forward.
  it("a failed intent and a cancelled unsigned one keep their holds until their signatures can no longer land, then release them whole", async () => {
    const project = await newProject("ledger release");
    const s = await sponsoring(project, "live", 31339);
    const db = await getDb();
    await credit(db, s.ctx, { chainId: 31339, amount: 10n ** 17n, cause: "funding", note: "test" });
    const start = (await balanceOf(db, s.ctx, 31339)).available;
    const custodial = await s.intent();
    const unsigned = await s.intent({ externalOwnerAddress: "0x000000000000000000000000000000000000dEaD" });
    expect(custodial.status, JSON.stringify(custodial.body)).toBe(200);
    expect(unsigned.status, JSON.stringify(unsigned.body)).toBe(200);
    expect(unsigned.body.nextAction?.type ?? "sign_with_wallet").toBe("sign_with_wallet");
    const held = (await balanceOf(db, s.ctx, 31339)).held;
    expect(held).toBeGreaterThan(0n);
    expect(await failIntent(db, custodial.body.id, "test")).toBe(true);
    expect(await cancelUnsigned(db, unsigned.body.id)).toBe(true);
    // Our paymaster's signatures on both ops may still land until the chain passes their window: still held.
    await followed(31339);
    expect((await balanceOf(db, s.ctx, 31339)).held).toBe(held);
    const client = clientOf(31339);
    await client.request({ method: "evm_increaseTime" as never, params: [toHex(SPONSORSHIP_SECONDS + 60)] as never });
    await client.request({ method: "evm_mine" as never, params: [] as never });
    const swept = await followed(31339);
    const holds = await db.select().from(sponsorshipHolds).where(inArray(sponsorshipHolds.intentId, [custodial.body.id, unsigned.body.id]));
    expect(holds.map((h) => h.status)).toEqual(["released", "released"]);
    for (const h of holds) expect(swept.released).toContain(h.id);
    const end = await balanceOf(db, s.ctx, 31339);
    expect(end).toMatchObject({ held: 0n, settled: 0n, available: start });
    // Again: nothing more released.
    expect(await failIntent(db, custodial.body.id, "again")).toBe(false);
    await followed(31339);
    expect(await balanceOf(db, s.ctx, 31339)).toEqual(end);
  }, 60_000);

  it("live mode starts at zero: a sponsored intent is declined (402 balance_insufficient) until the project is credited", async () => {
    const project = await newProject("ledger live");
    const s = await sponsoring(project, "live", 31339);
    const refused = await s.intent();
    expectError(refused, 402, "sponsorship_declined");
    expect(refused.body.error).toMatchObject({ code: "balance_insufficient", details: { policy: s.policy, remaining: "0" } });
    const db = await getDb();
    await credit(db, s.ctx, { chainId: 31339, amount: 10n ** 17n, cause: "funding", note: "test" });
    const accepted = await s.intent();
    expect(accepted.status, JSON.stringify(accepted.body)).toBe(200);
    const balance = await balanceOf(db, s.ctx, 31339);
    expect(balance.held).toBeGreaterThan(0n);
    expect(balance.available).toBe(10n ** 17n - balance.held);
  });

  it("a budget counted on the ledger is refused on a policy a registered paymaster sponsors (it would never bind), and naming a paymaster on a policy with one is refused", async () => {
    const project = await newProject("ledger registered paymaster");
    const key = project.keys.test.secret;
    const paymaster = (await call("POST", "/v1/paymasters", { key, json: { address: serviceDeployment().paymaster, url: "http://127.0.0.1:9/rpc", chainId: 31337 } })).body;
    expect(paymaster.id).toMatch(/^pay_/);
    const remote = (await call("POST", "/v1/policies", { key, json: { name: "remote", chainId: 31337, strategy: { sponsorSchema: "pay_for_user" }, paymaster: paymaster.id } })).body;
    const budget = { type: "budget", amount: "1000000000000000", currency: "native", scope: "policy", period: "day" };
    const refused = expectError(await call("POST", "/v1/policy_rules", { key, form: { policy: remote.id, ...budget } }), 400);
    expect(refused.details).toHaveProperty("scope");
    const perOp = await call("POST", "/v1/policy_rules", { key, json: { policy: remote.id, type: "budget", amount: "1000000000000000", currency: "native", scope: "operation" } });
    expect(perOp.status, JSON.stringify(perOp.body)).toBe(200);
    // The other way round: a policy with a ledger budget cannot be handed to a registered paymaster.
    const ours = (await call("POST", "/v1/policies", { key, json: { name: "ours", chainId: 31337, strategy: { sponsorSchema: "pay_for_user" } } })).body;
    expect((await call("POST", "/v1/policy_rules", { key, json: { policy: ours.id, ...budget } })).status).toBe(200);
    expectError(await call("POST", `/v1/policies/${ours.id}`, { key, json: { paymaster: paymaster.id } }), 409);
  });
});
