import http from "node:http";
import type { AddressInfo } from "node:net";
import { eq, like } from "drizzle-orm";
import { beforeAll, describe, expect, it, vi } from "vitest";
import { getDb } from "@/lib/db/client";
import { developers, rateLimitCounters } from "@/lib/db/schema";
import { developerProjectScope } from "@/lib/dashboard/context";
import { checkCredentials, projectsOf, signUp } from "@/lib/developers/service";
import { signUpInput } from "@/lib/developers/schema";
import { createPlayer, searchPlayers } from "@/lib/players/service";
import { activeKeys, createSecretKey, findKey, MAX_SECRET_KEYS_PER_MODE, revokeSecretKey } from "@/lib/projects/service";
import { webhookSignature } from "@/lib/deliveries/signing";
import { listDeliveries, sendTestEvent, setWebhook } from "@/lib/webhooks/service";
import { newProject } from "./helpers/api";

const unique = () => `dev-${crypto.randomUUID()}@example.com`;
const input = (email = unique(), password = "a long enough password") => signUpInput.parse({ email, password, name: "Dev" });

// Opening the database (and migrating a fresh PGlite) is the setup's time, not the first test's.
beforeAll(async () => {
  await getDb();
});

describe("developers", () => {
  it("sign-up makes an organization with a project only its members can open", async () => {
    const db = await getDb();
    const first = await signUp(db, input());
    const second = await signUp(db, input());
    const [ownA] = await projectsOf(db, first.id);
    const [ownB, ...moreB] = await projectsOf(db, second.id);
    expect(ownB).toMatchObject({ name: "My first project" });
    expect(moreB).toEqual([]);
    expect(ownA!.id).not.toBe(ownB!.id);
    expect(await developerProjectScope(second.id, ownA!.id, "test")).toBeNull();
    expect(await developerProjectScope(first.id, ownB!.id, "test")).toBeNull();
    expect(await developerProjectScope(second.id, ownB!.id, "test")).toMatchObject({ project: { id: ownB!.id } });
    // A project made later outside any organization (CLI) is nobody's until claimed.
    const orphan = await newProject("cli project");
    expect(await developerProjectScope(first.id, orphan.id, "test")).toBeNull();
    expect(await developerProjectScope(second.id, orphan.id, "test")).toBeNull();
  });

  it("stores a memory-hard hash, never the password, and checks it", async () => {
    const db = await getDb();
    const email = unique();
    const developer = await signUp(db, input(email, "correct horse battery staple"));
    const [row] = await db.select().from(developers).where(eq(developers.id, developer.id));
    expect(row!.passwordHash).toMatch(/^scrypt\$32768\$8\$1\$[\w-]{22}\$[\w-]{43}$/);
    expect(row!.passwordHash).not.toContain("correct horse");
    expect(await checkCredentials(db, email, "correct horse battery staple")).toMatchObject({ id: developer.id });
    expect(await checkCredentials(db, email, "correct horse battery stapl")).toBeNull();
    expect(await checkCredentials(db, unique(), "correct horse battery staple")).toBeNull();
  });

  it("refuses a taken email, whatever its case, also when both sign up at once", async () => {
    const db = await getDb();
    const email = unique();
    const results = await Promise.allSettled([signUp(db, input(email)), signUp(db, input(email.toUpperCase()))]);
    expect(results.filter((r) => r.status === "fulfilled")).toHaveLength(1);
    const refused = results.find((r) => r.status === "rejected") as PromiseRejectedResult;
    expect(refused.reason).toMatchObject({ status: 409 });
    await expect(signUp(db, input(email))).rejects.toMatchObject({ status: 409, message: expect.stringContaining("already exists") });
  });

  it("validates sign-up input", () => {
    expect(signUpInput.safeParse({ email: "not an email", password: "a long enough password" }).success).toBe(false);
    expect(signUpInput.safeParse({ email: unique(), password: "short" }).success).toBe(false);
    expect(signUpInput.parse({ email: "MiXeD@Example.COM", password: "a long enough password" }).email).toBe("mixed@example.com");
  });
});

describe("dashboard queries", () => {
  it("searches players by id, name or email, case-insensitively, with % and _ taken literally, in the project and mode only", async () => {
    const db = await getDb();
    const project = await newProject();
    const ctx = { projectId: project.id, livemode: false };
    const percent = await createPlayer(db, ctx, { name: "100% Hero" });
    await createPlayer(db, ctx, { name: "1000 Hero" });
    await createPlayer(db, ctx, { name: "Other", email: "Some_One@Example.com" });
    await createPlayer(db, { ...ctx, livemode: true }, { name: "100% Live" });
    await createPlayer(db, { projectId: (await newProject()).id, livemode: false }, { name: "100% Elsewhere" });
    const search = async (q: string) => (await searchPlayers(db, ctx, { q, limit: 20, skip: 0 })).rows.map((p) => p.name);
    expect(await search("100%")).toEqual(["100% Hero"]);
    expect(await search("some_one@example")).toEqual(["Other"]);
    expect(await search("someXone")).toEqual([]);
    expect(await search(percent.id.slice(4, 16))).toEqual(["100% Hero"]);
    expect((await searchPlayers(db, ctx, { limit: 2, skip: 0 })).total).toBe(3);
  });

  it("adds and revokes secret keys, never the last one", async () => {
    const db = await getDb();
    const project = await newProject();
    const ctx = { projectId: project.id, livemode: false };
    const extra = await createSecretKey(db, ctx);
    expect(await findKey(db, extra)).toMatchObject({ projectId: project.id, livemode: false, kind: "secret" });
    const secrets = (await activeKeys(db, ctx)).filter((k) => k.kind === "secret");
    expect(secrets).toHaveLength(2);
    expect(JSON.stringify(secrets)).not.toContain(extra);
    const original = await findKey(db, project.keys.test.secret);
    expect(await revokeSecretKey(db, { ...ctx, livemode: true }, original!.keyId)).toBe(false);
    expect(await revokeSecretKey(db, ctx, original!.keyId)).toBe(true);
    expect(await findKey(db, project.keys.test.secret)).toBeNull();
    const last = await findKey(db, extra);
    expect(await revokeSecretKey(db, ctx, last!.keyId)).toBe(false);
    expect(await findKey(db, extra)).not.toBeNull();
  });

  it("caps active secret keys per mode: a clear 400 past the cap, concurrent creations included", async () => {
    const db = await getDb();
    const project = await newProject();
    const ctx = { projectId: project.id, livemode: false };
    const made = await Promise.allSettled(Array.from({ length: MAX_SECRET_KEYS_PER_MODE + 2 }, () => createSecretKey(db, ctx)));
    // One secret key came with the project: the cap leaves room for MAX - 1 more.
    expect(made.filter((r) => r.status === "fulfilled")).toHaveLength(MAX_SECRET_KEYS_PER_MODE - 1);
    const refused = made.find((r) => r.status === "rejected") as PromiseRejectedResult;
    expect(refused.reason).toMatchObject({ status: 400, message: expect.stringContaining(`${MAX_SECRET_KEYS_PER_MODE} active secret keys`) });
    expect((await activeKeys(db, ctx)).filter((k) => k.kind === "secret")).toHaveLength(MAX_SECRET_KEYS_PER_MODE);
    // The other mode has its own; revoking one makes room again.
    await createSecretKey(db, { ...ctx, livemode: true });
    const original = await findKey(db, project.keys.test.secret);
    expect(await revokeSecretKey(db, ctx, original!.keyId)).toBe(true);
    await createSecretKey(db, ctx);
  });

  it("sends a signed test event at once and records the attempt, delivered or not", async () => {
    const db = await getDb();
    const project = await newProject();
    const ctx = { projectId: project.id, livemode: false };
    expect(await sendTestEvent(db, ctx)).toBeNull();
    const received: { signature: string; body: string }[] = [];
    let answer = 200;
    const server = http.createServer((req, res) => {
      let body = "";
      req.on("data", (c) => (body += c));
      req.on("end", () => {
        received.push({ signature: String(req.headers["openfort-signature"]), body });
        res.writeHead(answer).end();
      });
    });
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    try {
      await setWebhook(db, ctx, `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`);
      expect(await sendTestEvent(db, ctx)).toMatchObject({ status: "success", responseStatus: 200, topic: "test" });
      expect(received[0]!.signature).toBe(webhookSignature(project.keys.test.secret, received[0]!.body));
      expect(JSON.parse(received[0]!.body)).toMatchObject({ type: "test", data: { object: "event" } });
      answer = 500;
      expect(await sendTestEvent(db, ctx)).toMatchObject({ status: "failed", responseStatus: 500, error: "answered 500" });
      const { rows, total } = await listDeliveries(db, ctx, { limit: 10, skip: 0 });
      expect(total).toBe(2);
      expect(rows.map((r) => r.status)).toEqual(["failed", "success"]);
      expect((await listDeliveries(db, { ...ctx, livemode: true }, { limit: 10, skip: 0 })).total).toBe(0);
    } finally {
      server.close();
    }
  });
});

describe("sign-in lock-out", () => {
  it("locks an email after 10 wrong passwords for 15 minutes; a success clears the count", async () => {
    const { signInLockout: lock } = await import("@/lib/developers/service");
    const db = await getDb();
    const email = unique();
    const t0 = Date.now();
    for (let i = 0; i < 9; i++) await lock.recordFailure(db, email, t0);
    expect(await lock.lockedFor(db, email, t0)).toBe(0);
    await lock.clear(db, email);
    await Promise.all(Array.from({ length: 10 }, () => lock.recordFailure(db, email, t0)));
    expect(await lock.lockedFor(db, email, t0 + 60_000)).toBe(14 * 60_000);
    expect(await lock.lockedFor(db, unique(), t0)).toBe(0);
    expect(await lock.lockedFor(db, email, t0 + 15 * 60_000 + 1)).toBe(0);
    // A failure after the lock starts a new count.
    await lock.recordFailure(db, email, t0 + 15 * 60_000 + 1);
    expect(await lock.lockedFor(db, email, t0 + 15 * 60_000 + 2)).toBe(0);
  });

  it("holds on every instance: the count is in the database, not in the process", async () => {
    const { signInLockout: lock } = await import("@/lib/developers/service");
    const db = await getDb();
    const email = unique();
    for (let i = 0; i < 9; i++) await lock.recordFailure(db, email);
    const [count] = await db.select().from(rateLimitCounters).where(eq(rateLimitCounters.bucket, lock.failuresBucket(email)));
    expect(count!.hits).toBe(9);
    await lock.recordFailure(db, email);
    expect(await db.select().from(rateLimitCounters).where(eq(rateLimitCounters.bucket, lock.lockBucket(email)))).toHaveLength(1);
    // The table holds the email's hash, never the address.
    expect(await db.select().from(rateLimitCounters).where(like(rateLimitCounters.bucket, `%${email}%`))).toEqual([]);
    vi.resetModules(); // another process: a fresh module, no memory of the failures
    const fresh = await import("@/lib/developers/service");
    expect(await fresh.signInLockout.lockedFor(db, email)).toBeGreaterThan(0);
    expect(await lock.lockedFor(db, email)).toBeGreaterThan(0);
  });
});
