import crypto from "node:crypto";
import { and, eq, sql } from "drizzle-orm";
import { createSiweMessage } from "viem/siwe";
import { generatePrivateKey, privateKeyToAccount, type PrivateKeyAccount } from "viem/accounts";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { getDb } from "@/lib/db/client";
import { playerIdentities, playerSessions } from "@/lib/db/schema";
import { linkIdentity } from "@/lib/iam/identities";
import { openSession } from "@/lib/iam/sessions";
import { createPlayer } from "@/lib/players/service";
import type { ProjectWithKeys } from "@/lib/projects/service";
import { call, expectError, newProject } from "./helpers/api";
import { logIn, newEmail, PASSWORD, signedUp } from "./helpers/credentials-fixtures";
import { startIssuer, type TestIssuer } from "./helpers/oidc-issuer";

/**
 * Pre-account takeover (issue 29, point 5): someone signs up with another person's email, which
 * nobody proved, and hangs identities of their own on that player, waiting for the owner of the
 * address to arrive (by a provider that vouches for the email, or by a password reset) and move in.
 */

const SECRET = "client-secret-of-the-game-0000";
/** A client address in a /64 of its own (documentation range): per-address sign-in limits count only this call. */
const address = () => `2001:db8:${crypto.randomBytes(4).toString("hex").replace(/(.{4})/, "$1:")}::1`;
const from = () => ({ "x-forwarded-for": address() });
let project: ProjectWithKeys;
let pk: string;
let sk: string;
let issuer: TestIssuer;
const ctx = () => ({ projectId: project.id, livemode: false });

beforeAll(async () => {
  issuer = await startIssuer({
    clients: [{ client_id: "game-client", client_secret: SECRET }],
    accounts: { victim: { email: "victim@mail.example", email_verified: true, name: "Victim" }, victim2: { email: "victim2@mail.example", email_verified: true } },
  });
  project = await newProject("pre-account takeover");
  pk = project.keys.test.publishable;
  sk = project.keys.test.secret;
  for (const json of [
    { provider: "google", enabled: true, clientId: "game-client", clientSecret: SECRET, baseUrl: issuer.issuer },
    { provider: "oidc", enabled: true, aud: "game-client", baseUrl: issuer.issuer },
  ]) {
    const res = await call("POST", "/iam/v1/oauth", { key: sk, json });
    if (res.status !== 200) throw new Error(JSON.stringify(res.body));
  }
  // Where SIWE messages may come from, in installs that ask for it (a 404 where there is no such setting).
  await call("POST", "/iam/v1/siwe/settings", { key: sk, json: { domains: ["game.example"] } });
});
afterAll(() => issuer?.close());
afterEach(() => vi.unstubAllEnvs());

const wallet = () => privateKeyToAccount(generatePrivateKey());
async function linkWallet(token: string, account: PrivateKeyAccount) {
  const init = await call("POST", "/iam/v1/siwe/init/link", { key: token, json: { address: account.address } });
  expect(init.status, JSON.stringify(init.body)).toBe(200);
  const message = createSiweMessage({ domain: "game.example", address: account.address, uri: "https://game.example/login", version: "1", chainId: 31337, nonce: init.body.nonce });
  return call("POST", "/iam/v1/siwe/link", { key: token, headers: from(), json: { message, signature: await account.signMessage({ message }) } });
}
const unlinkWallet = (token: string, address: string) => call("POST", "/iam/v1/siwe/unlink", { key: token, json: { address } });
const linkEmail = (token: string, email: string) => call("POST", "/iam/v1/password/link", { key: token, headers: from(), json: { email, password: PASSWORD } });
const unlinkEmail = (token: string, email: string) => call("POST", "/iam/v1/password/unlink", { key: token, json: { email } });
const authorize = (provider: string, token: string) => call("POST", `/iam/v1/oauth/${provider}/authorize`, { key: sk, json: { token } });

async function verifyEmail(email: string) {
  const token = (await call("POST", "/iam/v1/password/verify_email/request", { key: sk, json: { email } })).body.token;
  expect((await call("POST", "/iam/v1/password/verify_email", { key: pk, basic: true, json: { token } })).status).toBe(200);
}
async function resetPassword(email: string, password = "the owner's new password") {
  const token = (await call("POST", "/iam/v1/password/reset/request", { key: sk, json: { email } })).body.token;
  return call("POST", "/iam/v1/password/reset", { key: pk, basic: true, headers: from(), json: { token, password } });
}
/** Moves a session's sign-in `seconds` into the past, as if the player had signed in that long ago. */
async function signedInAgo(refreshToken: string, seconds: number) {
  const sessionId = refreshToken.split(".")[0]!;
  await (await getDb()).update(playerSessions).set({ createdAt: sql`now() - make_interval(secs => ${seconds})` }).where(eq(playerSessions.id, sessionId));
}
/** A player who signed up with a wallet (as SIWE makes), and a session. */
async function walletPlayer() {
  const db = await getDb();
  const player = await createPlayer(db, ctx(), {});
  await linkIdentity(db, ctx(), player.id, { provider: "wallet", externalUserId: wallet().address });
  return { playerId: player.id, ...(await openSession(db, ctx(), player.id, "wallet")) };
}
const providersOf = (body: { linkedAccounts: { provider: string }[] }) => body.linkedAccounts.map((a) => a.provider).sort();

describe("link and unlink want a recent sign-in", () => {
  it("refuses them (403, reauthentication required) once the sign-in is older than the window, even after a refresh", async () => {
    const { token, refreshToken, email } = await signedUp(pk);
    await verifyEmail(email);
    const other = wallet();
    expect((await linkWallet(token, other)).status).toBe(200);
    await signedInAgo(refreshToken, 11 * 60);
    const refreshed = await call("POST", "/iam/v1/sessions", { key: pk, basic: true, json: { refreshToken } });
    expect(refreshed.status).toBe(200);
    for (const t of [token, refreshed.body.token]) {
      for (const res of [await linkWallet(t, wallet()), await unlinkWallet(t, other.address), await unlinkEmail(t, email)]) {
        const error = expectError(res, 403, "permission_error");
        expect(error.message).toMatch(/^Reauthentication required/);
      }
    }
    // Reading and other calls go on with the old sign-in.
    expect((await call("GET", "/iam/v1/me", { key: refreshed.body.token })).status).toBe(200);
    // Signing in again is what it takes.
    const again = await logIn(pk, email, PASSWORD, address());
    expect((await unlinkWallet(again.body.token, other.address)).status).toBe(200);
  });

  it("the window is a setting (PLAYER_REAUTH_WINDOW_SECONDS), and linking an email wants it too", async () => {
    const { token, refreshToken } = await walletPlayer();
    await signedInAgo(refreshToken, 120);
    vi.stubEnv("PLAYER_REAUTH_WINDOW_SECONDS", "60");
    expect(expectError(await linkEmail(token, newEmail()), 403).message).toMatch(/^Reauthentication required/);
    vi.stubEnv("PLAYER_REAUTH_WINDOW_SECONDS", "300");
    expect((await linkEmail(token, newEmail())).status).toBe(200);
  });

  it("player tokens carry the sign-in's time (auth_time), kept across refreshes", async () => {
    const { token, refreshToken } = await signedUp(pk);
    const claims = (t: string) => JSON.parse(Buffer.from(t.split(".")[1]!, "base64url").toString()) as { auth_time: number; iat: number };
    expect(Math.abs(claims(token).auth_time - Date.now() / 1000)).toBeLessThan(30);
    await signedInAgo(refreshToken, 3600);
    const refreshed = await call("POST", "/iam/v1/sessions", { key: pk, basic: true, json: { refreshToken } });
    expect(claims(refreshed.body.token).iat - claims(refreshed.body.token).auth_time).toBeGreaterThanOrEqual(3599);
  });
});

describe("a player whose email nobody proved", () => {
  it("takes no other identity until the email is verified", async () => {
    const { token, email, playerId } = await signedUp(pk, { email: newEmail("victim") });
    const error = expectError(await linkWallet(token, wallet()), 403, "permission_error");
    expect(error.message).toMatch(/verif/i);
    expect(await (await getDb()).select().from(playerIdentities).where(eq(playerIdentities.playerId, playerId))).toHaveLength(1);
    await verifyEmail(email);
    expect((await linkWallet(token, wallet())).status).toBe(200);
  });

  it("a provider's sign-in with that email verified gets a player of its own, never the unproven one", async () => {
    const squatted = await signedUp(pk, { email: "victim@mail.example" });
    const google = await authorize("google", await issuer.idToken("game-client", "victim"));
    expect(google.status, JSON.stringify(google.body)).toBe(200);
    expect(google.body.playerId).not.toBe(squatted.playerId);
    // Once the address is proven on the email player, the same person's other provider joins it.
    const proven = await signedUp(pk, { email: "victim2@mail.example" });
    await verifyEmail("victim2@mail.example");
    expect((await authorize("oidc", await issuer.idToken("game-client", "victim2"))).body.playerId).toBe(proven.playerId);
  });
});

describe("a password reset", () => {
  it("drops identities linked while the email was unverified, keeps those linked after, and ends every session", async () => {
    // An email player with a wallet hung on it before the address was proven (as was possible before links wanted it).
    const db = await getDb();
    const { playerId, email, token } = await signedUp(pk);
    const squatter = wallet().address.toLowerCase();
    await linkIdentity(db, ctx(), playerId, { provider: "wallet", externalUserId: squatter });
    await verifyEmail(email);
    const owners = wallet().address.toLowerCase();
    await linkIdentity(db, ctx(), playerId, { provider: "wallet", externalUserId: owners });

    const done = await resetPassword(email);
    expect(done.status, JSON.stringify(done.body)).toBe(200);
    expect(done.body.linkedAccounts.map((a: { externalUserId: string }) => a.externalUserId).sort()).toEqual([email.toLowerCase(), owners].sort());
    expectError(await call("GET", "/iam/v1/me", { key: token }), 401);
  });

  it("of an email never verified, leaves the player only that email: the reader of the mail is its owner", async () => {
    // Someone's wallet player with another person's address linked (unverified); the address's owner resets the password.
    const { playerId, token } = await walletPlayer();
    const email = newEmail("owner");
    expect((await linkEmail(token, email)).status).toBe(200);
    const done = await resetPassword(email);
    expect(done.status).toBe(200);
    expect(providersOf(done.body)).toEqual(["email"]);
    expect(done.body.linkedAccounts[0]).toMatchObject({ email, verified: true });
    const rows = await (await getDb()).select().from(playerIdentities).where(and(eq(playerIdentities.playerId, playerId), eq(playerIdentities.provider, "wallet")));
    expect(rows).toHaveLength(0);
    expect((await logIn(pk, email, "the owner's new password", address())).body.player.id).toBe(playerId);
  });
});
