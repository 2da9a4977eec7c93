import crypto from "node:crypto";
import { InngestTestEngine } from "@inngest/test";
import { eq, inArray } from "drizzle-orm";
import { afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { getDb } from "@/lib/db/client";
import {
  functionRuns,
  oauthSignins,
  outboundEvents,
  policies,
  sponsoredOperations,
  playerCredentialTokens,
  playerIdentities,
  players,
  playerSessions,
  requestLogs,
  sponsorshipBalances,
  sponsorshipDeclines,
  sponsorshipEntries,
  sponsorshipHolds,
  webhookDeliveries,
} from "@/lib/db/schema";
import { signinAad } from "@/lib/iam/google-signin";
import { newId } from "@/lib/ids";
import { encrypt } from "@/lib/keys/encryption";
import type { ProjectContext } from "@/lib/tenant";
import { purgeTable } from "@/lib/retention";
import { newProject } from "@/test/helpers/api";
import { purgeExpiredRows } from "./retention";

const DAY = 86_400_000;
const ago = (days: number) => new Date(Date.now() - days * DAY);
const hex = () => crypto.randomBytes(16).toString("hex");

let ctx: ProjectContext;
let playerId: string;
let identityId: string;

beforeAll(async () => {
  const project = await newProject("retention");
  ctx = { projectId: project.id, livemode: false };
  const db = await getDb();
  playerId = newId("player");
  identityId = newId("identity");
  await db.insert(players).values({ id: playerId, ...ctx, name: "kept around" });
  await db.insert(playerIdentities).values({ id: identityId, ...ctx, playerId, provider: "email", externalUserId: `${hex()}@example.com` });
});
afterEach(() => vi.unstubAllEnvs());

const requestLog = async (createdAt: Date) => {
  const id = newId("request");
  await (await getDb()).insert(requestLogs).values({ id, ...ctx, method: "GET", path: "/v1/players", status: 200, durationMs: 1, createdAt });
  return id;
};
const signin = async (expiresAt: Date) => {
  const id = newId("oauthSignin");
  // A real ciphertext: on PostgreSQL the test files share one database, which a rotation test may read whole.
  await (await getDb()).insert(oauthSignins).values({ id, ...ctx, provider: "google", stateHash: hex(), encryptedVerifier: encrypt("verifier", signinAad(id)), nonce: "n", keyHash: hex(), expiresAt });
  return id;
};
const credentialToken = async (expiresAt: Date, usedAt: Date | null = null) => {
  const tokenHash = hex();
  await (await getDb()).insert(playerCredentialTokens).values({ tokenHash, ...ctx, identityId, purpose: "password_reset", expiresAt, usedAt });
  return tokenHash;
};
const session = async (expiresAt: Date, revokedAt: Date | null = null) => {
  const id = newId("playerSession");
  await (await getDb()).insert(playerSessions).values({ id, ...ctx, playerId, provider: "email", refreshHash: hex(), expiresAt, revokedAt });
  return id;
};

const left = async () => {
  const db = await getDb();
  return {
    requestLogs: (await db.select({ id: requestLogs.id }).from(requestLogs).where(eq(requestLogs.projectId, ctx.projectId))).map((r) => r.id),
    oauthSignins: (await db.select({ id: oauthSignins.id }).from(oauthSignins).where(eq(oauthSignins.projectId, ctx.projectId))).map((r) => r.id),
    credentialTokens: (await db.select({ id: playerCredentialTokens.tokenHash }).from(playerCredentialTokens).where(eq(playerCredentialTokens.projectId, ctx.projectId))).map((r) => r.id),
    playerSessions: (await db.select({ id: playerSessions.id }).from(playerSessions).where(eq(playerSessions.projectId, ctx.projectId))).map((r) => r.id),
  };
};

const sweep = async () => {
  const { result, error } = await new InngestTestEngine({ function: purgeExpiredRows }).execute();
  expect(error).toBeUndefined();
  return result as Record<string, number>;
};

describe("the purge-expired-rows function (retention, issue 29.9)", () => {
  it("deletes rows past each table's default retention and keeps the rest", async () => {
    const oldLog = await requestLog(ago(31));
    const recentLog = await requestLog(ago(29));
    const oldSignin = await signin(ago(1.1));
    const recentSignin = await signin(ago(0.5));
    const pendingSignin = await signin(new Date(Date.now() + 600_000));
    const expiredToken = await credentialToken(ago(8));
    const usedToken = await credentialToken(new Date(Date.now() + 3_600_000), ago(8));
    const recentlyUsed = await credentialToken(new Date(Date.now() + 3_600_000), ago(6));
    const liveToken = await credentialToken(new Date(Date.now() + 3_600_000));
    const expiredSession = await session(ago(31));
    const revokedSession = await session(new Date(Date.now() + 10 * DAY), ago(31));
    const recentlyRevoked = await session(new Date(Date.now() + 10 * DAY), ago(29));
    const liveSession = await session(new Date(Date.now() + 10 * DAY));
    // What earlier versions logged for requests without a project: gone at the first sweep.
    const orphan = newId("request");
    await (await getDb()).insert(requestLogs).values({ id: orphan, method: "GET", path: "/v1/players", status: 401, durationMs: 1 });

    const result = await sweep();
    expect(result).toMatchObject({ requestLogs: expect.any(Number), oauthSignins: expect.any(Number) });
    expect(await left()).toEqual({
      requestLogs: [recentLog],
      oauthSignins: expect.arrayContaining([recentSignin, pendingSignin]),
      credentialTokens: expect.arrayContaining([recentlyUsed, liveToken]),
      playerSessions: expect.arrayContaining([recentlyRevoked, liveSession]),
    });
    const remaining = await left();
    expect(remaining.oauthSignins).not.toContain(oldSignin);
    expect(remaining.credentialTokens).toHaveLength(2);
    expect(remaining.credentialTokens).not.toContain(expiredToken);
    expect(remaining.credentialTokens).not.toContain(usedToken);
    expect(remaining.playerSessions).toHaveLength(2);
    expect(remaining.playerSessions).not.toContain(expiredSession);
    expect(remaining.playerSessions).not.toContain(revokedSession);
    expect(remaining.requestLogs).not.toContain(oldLog);
    expect(await (await getDb()).select().from(requestLogs).where(eq(requestLogs.id, orphan))).toEqual([]);
  });

  it("deletes delivery attempts and fanned-out events after 30 days, finished runs after 14 (never a run still to do), ERC-7677 records after 400", async () => {
    const db = await getDb();
    const delivery = async (createdAt: Date) => {
      const id = newId("webhookDelivery");
      await db.insert(webhookDeliveries).values({ id, ...ctx, target: "webhook", topic: "transaction_intent.successful", url: "https://example.com/hook", attempt: 1, status: "success", durationMs: 1, createdAt });
      return id;
    };
    const event = async (createdAt: Date, fannedOutAt: Date | null) => {
      const id = newId("message");
      await db.insert(outboundEvents).values({ id, ...ctx, topic: "transaction_intent.successful", body: "{}", dedupeKey: hex(), createdAt, fannedOutAt });
      return id;
    };
    const run = async (status: "queued" | "running" | "completed" | "failed", runAt: Date) => {
      const id = `run_${hex()}`;
      await db.insert(functionRuns).values({ id, functionId: "retention-test", eventId: hex(), event: { name: "test", data: {}, id: hex(), ts: 0 }, status, steps: { order: [], state: {} }, runAt });
      return id;
    };
    const oldDelivery = await delivery(ago(31));
    const recentDelivery = await delivery(ago(29));
    const oldEvent = await event(ago(31), ago(31));
    const recentEvent = await event(ago(29), ago(29));
    const unfanned = await event(ago(40), null);
    const [oldDone, oldFailed, oldQueued, oldRunning, recentDone] = await Promise.all([
      run("completed", ago(15)),
      run("failed", ago(15)),
      run("queued", ago(40)),
      run("running", ago(40)),
      run("completed", ago(13)),
    ]);

    const [policy] = await db.insert(policies).values({ id: newId("policy"), ...ctx, name: "retention", chainId: 31337, sponsorSchema: "pay_for_user" }).returning();
    const signed = async (createdAt: Date) => {
      const id = newId("sponsoredOperation");
      await db.insert(sponsoredOperations).values({ id, ...ctx, policyId: policy!.id, chainId: 31337, sender: `0x${hex()}${hex().slice(0, 8)}`, nonce: "0", maxCost: "1", userOperationHash: `0x${hex()}${hex()}`, createdAt });
      return id;
    };
    const oldSigned = await signed(ago(401));
    const recentSigned = await signed(ago(399));

    await sweep();
    const ids = async <T extends { id: unknown }>(rows: Promise<T[]>) => (await rows).map((r) => r.id);
    expect(await ids(db.select({ id: webhookDeliveries.id }).from(webhookDeliveries).where(inArray(webhookDeliveries.id, [oldDelivery, recentDelivery])))).toEqual([recentDelivery]);
    expect((await ids(db.select({ id: outboundEvents.id }).from(outboundEvents).where(inArray(outboundEvents.id, [oldEvent, recentEvent, unfanned])))).sort()).toEqual([recentEvent, unfanned].sort());
    expect((await ids(db.select({ id: functionRuns.id }).from(functionRuns).where(inArray(functionRuns.id, [oldDone, oldFailed, oldQueued, oldRunning, recentDone])))).sort()).toEqual(
      [oldQueued, oldRunning, recentDone].sort(),
    );
    expect(await ids(db.select({ id: sponsoredOperations.id }).from(sponsoredOperations).where(inArray(sponsoredOperations.id, [oldSigned, recentSigned])))).toEqual([recentSigned]);
  });

  it("deletes sponsorship declines after 90 days, settled or released holds with their entries after 400; never a live hold, a credit or a balance", async () => {
    const db = await getDb();
    const chainId = 31338;
    const decline = async (createdAt: Date) => {
      const id = newId("sponsorshipDecline");
      await db.insert(sponsorshipDeclines).values({ id, ...ctx, chainId, code: "budget_exhausted", source: "intent", createdAt });
      return id;
    };
    const oldDecline = await decline(ago(91));
    const recentDecline = await decline(ago(89));

    const heldFor = async (status: "held" | "settled" | "released", createdAt: Date) => {
      const id = newId("sponsorshipHold");
      await db.insert(sponsorshipHolds).values({ id, ...ctx, chainId, status, amount: "100", settledAmount: status === "settled" ? "40" : null, cause: "intent", createdAt });
      const kinds = status === "held" ? ["hold"] : status === "settled" ? ["hold", "settle", "release"] : ["hold", "release"];
      const entries = [];
      for (const kind of kinds) {
        const entry = newId("sponsorshipEntry");
        await db.insert(sponsorshipEntries).values({ id: entry, ...ctx, chainId, kind: kind as "hold", amount: "100", cause: "intent", holdId: id, createdAt });
        entries.push(entry);
      }
      return { id, entries };
    };
    const oldSettled = await heldFor("settled", ago(401));
    const oldReleased = await heldFor("released", ago(401));
    const oldLive = await heldFor("held", ago(401));
    const recentSettled = await heldFor("settled", ago(399));
    const oldCredit = newId("sponsorshipEntry");
    await db.insert(sponsorshipEntries).values({ id: oldCredit, ...ctx, chainId, kind: "credit", amount: "1000", cause: "funding", reference: "cli:ops@host", createdAt: ago(800) });
    await db.insert(sponsorshipBalances).values({ ...ctx, chainId, credited: "1000", held: "100", settled: "80" }).onConflictDoNothing();
    const [balanceBefore] = await db.select().from(sponsorshipBalances).where(inArray(sponsorshipBalances.projectId, [ctx.projectId]));

    await sweep();
    const ids = async <T extends { id: unknown }>(rows: Promise<T[]>) => (await rows).map((r) => r.id).sort();
    expect(await ids(db.select({ id: sponsorshipDeclines.id }).from(sponsorshipDeclines).where(inArray(sponsorshipDeclines.id, [oldDecline, recentDecline])))).toEqual([recentDecline]);
    const holds = [oldSettled, oldReleased, oldLive, recentSettled];
    expect(await ids(db.select({ id: sponsorshipHolds.id }).from(sponsorshipHolds).where(inArray(sponsorshipHolds.id, holds.map((h) => h.id))))).toEqual([oldLive.id, recentSettled.id].sort());
    const allEntries = [...holds.flatMap((h) => h.entries), oldCredit];
    expect(await ids(db.select({ id: sponsorshipEntries.id }).from(sponsorshipEntries).where(inArray(sponsorshipEntries.id, allEntries)))).toEqual(
      [...oldLive.entries, ...recentSettled.entries, oldCredit].sort(),
    );
    expect(await db.select().from(sponsorshipBalances).where(inArray(sponsorshipBalances.projectId, [ctx.projectId]))).toEqual([balanceBefore]);

    // Both windows are settings.
    vi.stubEnv("SPONSORSHIP_DECLINES_RETENTION_DAYS", "10");
    vi.stubEnv("SPONSORSHIP_HOLD_RETENTION_DAYS", "300");
    const shortDecline = await decline(ago(11));
    expect(await purgeTable(db, "sponsorshipDeclines")).toBeGreaterThanOrEqual(2);
    expect(await db.select().from(sponsorshipDeclines).where(inArray(sponsorshipDeclines.id, [recentDecline, shortDecline]))).toEqual([]);
    await purgeTable(db, "sponsorshipEntries");
    await purgeTable(db, "sponsorshipHolds");
    expect(await ids(db.select({ id: sponsorshipHolds.id }).from(sponsorshipHolds).where(inArray(sponsorshipHolds.id, holds.map((h) => h.id))))).toEqual([oldLive.id]);
  });

  it("reads its windows from the environment, and deletes in bounded batches", async () => {
    vi.stubEnv("REQUEST_LOG_RETENTION_DAYS", "2");
    const ids = await Promise.all([3, 4, 5, 6, 7].map((d) => requestLog(ago(d))));
    const kept = await requestLog(ago(1));
    // Batches of 2, at most 2 of them: 4 rows go in this sweep, the last one in the next.
    vi.stubEnv("RETENTION_BATCH_SIZE", "2");
    vi.stubEnv("RETENTION_MAX_BATCHES", "2");
    const db = await getDb();
    const first = await purgeTable(db, "requestLogs");
    expect(first).toBe(4);
    vi.unstubAllEnvs();
    vi.stubEnv("REQUEST_LOG_RETENTION_DAYS", "2");
    await sweep();
    expect((await db.select({ id: requestLogs.id }).from(requestLogs).where(inArray(requestLogs.id, [...ids, kept]))).map((r) => r.id)).toEqual([kept]);
  });
});
