import { eq } from "drizzle-orm";
import { afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { getDb } from "@/lib/db/client";
import { playerCredentialTokens, playerIdentities } from "@/lib/db/schema";
import { linkIdentity } from "@/lib/iam/identities";
import { openSession } from "@/lib/iam/sessions";
import { createPlayer } from "@/lib/players/service";
import type { ProjectWithKeys } from "@/lib/projects/service";
import { sha256 } from "@/lib/keys/encryption";
import { call, expectError, newProject } from "./helpers/api";
import { from, logIn, newEmail, PASSWORD, signedUp } from "./helpers/credentials-fixtures";

let project: ProjectWithKeys;
let pk: string;
let sk: string;
beforeAll(async () => {
  project = await newProject("passwords");
  pk = project.keys.test.publishable;
  sk = project.keys.test.secret;
});
afterEach(() => vi.unstubAllEnvs());

const requestReset = (email: string, key = sk) => call("POST", "/iam/v1/password/reset/request", { key, form: { email } });
const reset = (token: string, password: string, key = pk) => call("POST", "/iam/v1/password/reset", { key, basic: true, headers: from(), json: { token, password } });
const verify = (token: string) => call("GET", "/iam/v1/verify", { key: sk, query: { token } });

describe("password reset", () => {
  it("hands the backend a single-use token; the reset sets the password, verifies the email and ends every session", async () => {
    const { email, playerId, token: session } = await signedUp(pk);
    const requested = await requestReset(email.toUpperCase());
    expect(requested.body).toEqual({ object: "password_reset", email, playerId, token: expect.stringMatching(/^pwr_/), expiresAt: expect.any(Number) });
    expect(requested.body.expiresAt - Date.now() / 1000).toBeGreaterThan(3590);
    // Kept as its hash only.
    const [row] = await (await getDb()).select().from(playerCredentialTokens).where(eq(playerCredentialTokens.tokenHash, sha256(requested.body.token)));
    expect(row).toMatchObject({ purpose: "password_reset", usedAt: null });
    expect(JSON.stringify(row)).not.toContain(requested.body.token);

    expectError(await reset(requested.body.token, "short"), 400);
    const done = await reset(requested.body.token, "a brand new password");
    expect(done.status, JSON.stringify(done.body)).toBe(200);
    expect(done.body).toMatchObject({ id: playerId, linkedAccounts: [{ provider: "email", verified: true }] });
    expectError(await verify(session), 401);
    expectError(await logIn(pk, email), 401);
    expect((await logIn(pk, email, "a brand new password")).status).toBe(200);
    // Used once.
    expect(expectError(await reset(requested.body.token, "yet another password"), 400).details?.token?.message).toMatch(/already used/);
  });

  it("a newer token replaces an older one; an expired token, another mode's or a made-up one is refused", async () => {
    const { email } = await signedUp(pk);
    const first = (await requestReset(email)).body.token;
    const second = (await requestReset(email)).body.token;
    expect(expectError(await reset(first, "new password 1"), 400).details?.token?.message).toMatch(/replaced/);
    expect(expectError(await reset(second, "new password 2", project.keys.live.publishable), 400).details?.token?.message).toMatch(/not a token of this project/);
    expectError(await reset("pwr_madeup", "new password 3"), 400);
    expect((await reset(second, "new password 4")).status).toBe(200);

    vi.stubEnv("PLAYER_PASSWORD_RESET_TTL_SECONDS", "0");
    const expired = (await requestReset(email)).body.token;
    expect(expectError(await reset(expired, "new password 5"), 400).details?.token?.message).toMatch(/expired/);
  });

  it("lifts a lockout", async () => {
    vi.stubEnv("RATE_LIMIT_AUTH_PER_MINUTE", "0");
    const { email } = await signedUp(pk);
    for (let i = 0; i < 10; i++) await logIn(pk, email, "wrong password");
    expectError(await logIn(pk, email), 429);
    expect((await reset((await requestReset(email)).body.token, "after the lockout")).status).toBe(200);
    expect((await logIn(pk, email, "after the lockout")).status).toBe(200);
  });

  it("wants a secret key to ask, names an unknown email, and validates both calls", async () => {
    const { email } = await signedUp(pk);
    expectError(await requestReset(email, pk), 403, "permission_error");
    expect(expectError(await requestReset(newEmail("nobody")), 400).details).toHaveProperty("email");
    expect(expectError(await call("POST", "/iam/v1/password/reset/request", { key: sk, json: {} }), 400).details).toHaveProperty("email");
    expect(expectError(await call("POST", "/iam/v1/password/reset", { key: pk, basic: true, form: { password: PASSWORD } }), 400).details).toHaveProperty("token");
    expect(expectError(await call("POST", "/iam/v1/password/reset", { key: pk, basic: true, form: { token: "pwr_x" } }), 400).details).toHaveProperty("password");
  });
});

describe("email verification", () => {
  it.each(["json", "form"] as const)("marks the email verified with a single-use token (%s)", async (encoding) => {
    const { email, playerId } = await signedUp(pk);
    const requested = await call("POST", "/iam/v1/password/verify_email/request", { key: sk, ...(encoding === "json" ? { json: { email } } : { form: { email } }) });
    expect(requested.body).toMatchObject({ object: "email_verification", email, playerId, token: expect.stringMatching(/^vem_/) });
    const body = { token: requested.body.token };
    const verified = await call("POST", "/iam/v1/password/verify_email", { key: pk, basic: true, ...(encoding === "json" ? { json: body } : { form: body }) });
    expect(verified.body).toMatchObject({ id: playerId, linkedAccounts: [{ provider: "email", verified: true }] });
    expectError(await call("POST", "/iam/v1/password/verify_email", { key: pk, basic: true, json: body }), 400);
    expect(expectError(await call("POST", "/iam/v1/password/verify_email/request", { key: sk, json: { email } }), 409).message).toMatch(/already verified/);
    // A reset token is not a verification token.
    const { email: other } = await signedUp(pk);
    const resetToken = (await requestReset(other)).body.token;
    expectError(await call("POST", "/iam/v1/password/verify_email", { key: pk, basic: true, json: { token: resetToken } }), 400);
  });
});

describe("linking and unlinking an email", () => {
  /** A player who signed in another way (a wallet identity, as SIWE makes), with a session. */
  async function walletPlayer() {
    const db = await getDb();
    const ctx = { projectId: project.id, livemode: false };
    const player = await createPlayer(db, ctx, { name: "wallet player" });
    await linkIdentity(db, ctx, player.id, { provider: "wallet", externalUserId: `0x${crypto.randomUUID().replaceAll("-", "").padEnd(40, "0")}` });
    return { playerId: player.id, token: (await openSession(db, ctx, player.id, "wallet")).token };
  }
  const link = (token: string, body: Record<string, unknown>) => call("POST", "/iam/v1/password/link", { key: token, headers: from(), json: body });
  const unlink = (token: string, email: string) => call("POST", "/iam/v1/password/unlink", { key: token, form: { email } });

  it("adds an email sign-in to the signed-in player, then removes it", async () => {
    const { playerId, token } = await walletPlayer();
    const email = newEmail("linked");
    const linked = await link(token, { email, password: PASSWORD });
    expect(linked.status, JSON.stringify(linked.body)).toBe(200);
    expect(linked.body).toMatchObject({ id: playerId, email, linkedAccounts: [{ provider: "wallet" }, { provider: "email", email }] });
    expect((await logIn(pk, email)).body.player.id).toBe(playerId);
    // One email sign-in per player.
    expect(expectError(await link(token, { email: newEmail(), password: PASSWORD }), 409).message).toMatch(/already signs in with an email/);

    const unlinked = await unlink(token, email.toUpperCase());
    expect(unlinked.body.linkedAccounts).toEqual([expect.objectContaining({ provider: "wallet" })]);
    expectError(await logIn(pk, email), 401);
  });

  it("refuses another player's email, a bad password, an email the player lacks, and the last identity", async () => {
    const { token } = await walletPlayer();
    const taken = await signedUp(pk);
    expectError(await link(token, { email: taken.email, password: PASSWORD }), 409);
    expect(expectError(await link(token, { email: newEmail(), password: "short" }), 400).details).toEqual({ password: { message: expect.stringMatching(/8 to 128/) } });
    expect(expectError(await link(token, { email: "nope" }), 400).details).toHaveProperty("email");
    expect(expectError(await unlink(token, newEmail()), 400).details).toHaveProperty("email");
    // Their only sign-in stays.
    expect(expectError(await unlink(taken.token, taken.email), 409).message).toMatch(/only way to sign in/);
    const rows = await (await getDb()).select().from(playerIdentities).where(eq(playerIdentities.playerId, taken.playerId));
    expect(rows).toHaveLength(1);
    // Keys are not player tokens.
    expectError(await link(pk, { email: newEmail(), password: PASSWORD }), 401);
  });

  it("of two concurrent links of different emails, lets one through (one email sign-in per player)", async () => {
    const { playerId, token } = await walletPlayer();
    const answers = await Promise.all([newEmail("a"), newEmail("b")].map((email) => link(token, { email, password: PASSWORD })));
    expect(answers.map((a) => a.status).sort()).toEqual([200, 409]);
    const rows = await (await getDb()).select().from(playerIdentities).where(eq(playerIdentities.playerId, playerId));
    expect(rows.map((r) => r.provider).sort()).toEqual(["email", "wallet"]);
  });
});
