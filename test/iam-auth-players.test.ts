import crypto from "node:crypto";
import { beforeAll, describe, expect, it } from "vitest";
import type { ProjectWithKeys } from "@/lib/projects/service";
import { call, expectError, newProject } from "./helpers/api";

/** /iam/v1/players: players created for third-party identities, listed, read and deleted with their identities and sessions. */

let project: ProjectWithKeys;
let sk: string;
const BOT_TOKEN = "7012345678:AAH-players-bot-token";

beforeAll(async () => {
  project = await newProject("auth players");
  sk = project.keys.test.secret;
  await call("POST", "/iam/v1/oauth", { key: sk, json: { provider: "telegramMiniApp", enabled: true, botToken: BOT_TOKEN } });
});

/** Mini App init data, signed as Telegram does, for a real sign-in (and so a session) in these tests. */
function initData(userId: number) {
  const fields: Record<string, string> = { auth_date: String(Math.floor(Date.now() / 1000)), user: JSON.stringify({ id: userId, first_name: "P" }) };
  const check = Object.keys(fields).sort().map((k) => `${k}=${fields[k]}`).join("\n");
  const secret = crypto.createHmac("sha256", "WebAppData").update(BOT_TOKEN).digest();
  return new URLSearchParams({ ...fields, hash: crypto.createHmac("sha256", secret).update(check).digest("hex") }).toString();
}

const uid = () => `uid-${crypto.randomUUID()}`;

describe("/iam/v1/players", () => {
  it("creates a player for a third-party identity, with JSON and with a form, in the authenticated-player shape", async () => {
    const json = await call("POST", "/iam/v1/players", { key: sk, json: { thirdPartyUserId: "fb-uid-1", thirdPartyProvider: "firebase", preGenerateEmbeddedAccount: false, metadata: { level: 3 } } });
    expect(json.status).toBe(200);
    expect(json.body).toMatchObject({
      id: expect.stringMatching(/^pla_/),
      object: "player",
      linkedAccounts: [{ provider: "firebase", externalUserId: "fb-uid-1", email: null, disabled: false, verified: true, updatedAt: expect.any(Number) }],
      player: { id: json.body.id, object: "player", metadata: { level: 3 }, accounts: [], transactionIntents: [] },
    });
    const form = await call("POST", "/iam/v1/players", { key: sk, form: { thirdPartyUserId: "fb-uid-2", thirdPartyProvider: "firebase", preGenerateEmbeddedAccount: "false", metadata: { level: "3" } } });
    expect(form.status).toBe(200);
    expect(form.body.linkedAccounts[0]).toMatchObject({ provider: "firebase", externalUserId: "fb-uid-2" });
    const got = await call("GET", `/iam/v1/players/${json.body.id}`, { key: sk });
    expect(got.body).toEqual(json.body);
  });

  it("a second player for the same identity is a 409; the same user id with another provider is another identity", async () => {
    const id = uid();
    expect((await call("POST", "/iam/v1/players", { key: sk, json: { thirdPartyUserId: id, thirdPartyProvider: "playfab", preGenerateEmbeddedAccount: false } })).status).toBe(200);
    expectError(await call("POST", "/iam/v1/players", { key: sk, json: { thirdPartyUserId: id, thirdPartyProvider: "playfab", preGenerateEmbeddedAccount: false } }), 409);
    const concurrent = await Promise.all(
      Array.from({ length: 3 }, () => call("POST", "/iam/v1/players", { key: sk, json: { thirdPartyUserId: `${id}-c`, thirdPartyProvider: "oidc", preGenerateEmbeddedAccount: false } })),
    );
    expect(concurrent.map((r) => r.status).sort()).toEqual([200, 409, 409]);
    expect((await call("POST", "/iam/v1/players", { key: sk, json: { thirdPartyUserId: id, thirdPartyProvider: "lootlocker", preGenerateEmbeddedAccount: false } })).status).toBe(200);
  });

  it("pre-generates the player's account on chainId (required then)", async () => {
    const missing = expectError(await call("POST", "/iam/v1/players", { key: sk, json: { thirdPartyUserId: uid(), thirdPartyProvider: "custom", preGenerateEmbeddedAccount: true } }), 400);
    expect(missing.details).toHaveProperty("chainId");
    const res = await call("POST", "/iam/v1/players", { key: sk, json: { thirdPartyUserId: uid(), thirdPartyProvider: "custom", preGenerateEmbeddedAccount: true, chainId: 31337 } });
    expect(res.status).toBe(200);
    expect(res.body.player.accounts).toHaveLength(1);
    const account = await call("GET", `/v1/accounts/${res.body.player.accounts[0].id}`, { key: sk });
    expect(account.body).toMatchObject({ chainId: 31337, custodial: true, player: { id: res.body.id } });
    // A live key cannot use a test chain: nothing is left behind.
    const live = project.keys.live.secret;
    const id = uid();
    expectError(await call("POST", "/iam/v1/players", { key: live, json: { thirdPartyUserId: id, thirdPartyProvider: "custom", preGenerateEmbeddedAccount: true, chainId: 31337 } }), 400);
    expect((await call("GET", "/iam/v1/players", { key: live, query: { externalUserId: id } })).body.total).toBe(0);
  });

  it("refuses bad input with a 400 naming the parameter", async () => {
    const bad = async (json: Record<string, unknown>, param: string) => expect(expectError(await call("POST", "/iam/v1/players", { key: sk, json }), 400).details).toHaveProperty(param);
    await bad({ thirdPartyProvider: "firebase", preGenerateEmbeddedAccount: false }, "thirdPartyUserId");
    await bad({ thirdPartyUserId: "x", thirdPartyProvider: "myspace", preGenerateEmbeddedAccount: false }, "thirdPartyProvider");
    await bad({ thirdPartyUserId: "x", thirdPartyProvider: "firebase" }, "preGenerateEmbeddedAccount");
    await bad({ thirdPartyUserId: "x", thirdPartyProvider: "firebase", preGenerateEmbeddedAccount: false, chainId: 1 }, "chainId");
    await bad({ thirdPartyUserId: "x", thirdPartyProvider: "firebase", preGenerateEmbeddedAccount: false, name: "n" }, "name");
    expectError(await call("GET", "/iam/v1/players", { key: sk, query: { limit: 0 } }), 400);
    expectError(await call("GET", "/iam/v1/players/pla_nope", { key: sk }), 404);
  });

  it("lists players with identities, newest first, filtered by email or externalUserId", async () => {
    const p = await newProject();
    const key = p.keys.test.secret;
    await call("POST", "/v1/players", { key, json: { name: "no identity", email: "filter@example.com" } });
    const ids: string[] = [];
    for (let i = 0; i < 4; i++) ids.push((await call("POST", "/iam/v1/players", { key, json: { thirdPartyUserId: `list-${i}`, thirdPartyProvider: "supabase", preGenerateEmbeddedAccount: false } })).body.id);
    await call("POST", `/v1/players/${ids[1]}`, { key, json: { email: "Filter@Example.com" } });

    const all = await call("GET", "/iam/v1/players", { key });
    expect(all.body).toMatchObject({ object: "list", url: "/iam/v1/players", start: 0, end: 4, total: 4 });
    expect(all.body.data.map((x: { id: string }) => x.id)).toEqual([...ids].reverse());
    const page = await call("GET", "/iam/v1/players", { key, query: { limit: 2, skip: 1, order: "asc" } });
    expect(page.body).toMatchObject({ start: 1, end: 3, total: 4 });
    expect(page.body.data.map((x: { id: string }) => x.id)).toEqual(ids.slice(1, 3));
    const byEmail = await call("GET", "/iam/v1/players", { key, query: { email: "filter@example.com" } });
    expect(byEmail.body.data.map((x: { id: string }) => x.id)).toEqual([ids[1]]);
    const byUser = await call("GET", "/iam/v1/players", { key, query: { externalUserId: "list-2" } });
    expect(byUser.body.data.map((x: { id: string }) => x.id)).toEqual([ids[2]]);
    expect((await call("GET", "/iam/v1/players", { key, query: { externalUserId: "list-9" } })).body).toMatchObject({ total: 0, data: [] });
    // Other projects and modes see none of them.
    expect((await call("GET", "/iam/v1/players", { key: p.keys.live.secret })).body.total).toBe(0);
    expectError(await call("GET", `/iam/v1/players/${ids[0]}`, { key: sk }), 404);
  });

  it("delete removes the player and its identities and ends its sessions; the identity may sign in afresh", async () => {
    const signIn = await call("POST", "/iam/v1/oauth/telegramMiniApp/authorize", { key: sk, json: { token: initData(4001) } });
    expect(signIn.status).toBe(200);
    const { playerId, token } = signIn.body;
    expect((await call("POST", "/iam/v1/authorize", { key: sk, json: { authorizationCode: token } })).status).toBe(200);

    const deleted = await call("DELETE", `/iam/v1/players/${playerId}`, { key: sk });
    expect(deleted.status).toBe(200);
    expect(deleted.body).toMatchObject({ id: playerId, object: "player", deleted: true, linkedAccounts: [expect.objectContaining({ provider: "telegramMiniApp", externalUserId: "4001" })] });
    expect(expectError(await call("POST", "/iam/v1/authorize", { key: sk, json: { authorizationCode: token } }), 401).message).toContain("ended");
    expectError(await call("GET", `/iam/v1/players/${playerId}`, { key: sk }), 404);
    expectError(await call("GET", `/v1/players/${playerId}`, { key: sk }), 404);
    expectError(await call("DELETE", `/iam/v1/players/${playerId}`, { key: sk }), 404);
    expectError(await call("GET", "/iam/v1/oauth/telegramMiniApp/user/4001", { key: sk }), 404);

    const again = await call("POST", "/iam/v1/oauth/telegramMiniApp/authorize", { key: sk, json: { token: initData(4001) } });
    expect(again.status).toBe(200);
    expect(again.body.playerId).not.toBe(playerId);
  });

  it("an identity whose player was deleted through /v1/players is released", async () => {
    const id = uid();
    const first = await call("POST", "/iam/v1/players", { key: sk, json: { thirdPartyUserId: id, thirdPartyProvider: "oidc", preGenerateEmbeddedAccount: false } });
    await call("DELETE", `/v1/players/${first.body.id}`, { key: sk });
    const second = await call("POST", "/iam/v1/players", { key: sk, json: { thirdPartyUserId: id, thirdPartyProvider: "oidc", preGenerateEmbeddedAccount: false } });
    expect(second.status).toBe(200);
    expect(second.body.id).not.toBe(first.body.id);
  });

  it("authorize refuses tokens that are not this project's and mode's, or malformed", async () => {
    const signIn = await call("POST", "/iam/v1/oauth/telegramMiniApp/authorize", { key: sk, json: { token: initData(4002) } });
    const other = await newProject();
    expectError(await call("POST", "/iam/v1/authorize", { key: other.keys.test.secret, json: { authorizationCode: signIn.body.token } }), 401);
    expectError(await call("POST", "/iam/v1/authorize", { key: project.keys.live.secret, json: { authorizationCode: signIn.body.token } }), 401);
    expectError(await call("POST", "/iam/v1/authorize", { key: sk, json: { authorizationCode: "nope" } }), 401);
    expectError(await call("POST", "/iam/v1/authorize", { key: sk, json: {} }), 400);
  });
});
