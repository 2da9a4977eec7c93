import Openfort from "@openfort/openfort-node";
import { createRemoteJWKSet, decodeProtectedHeader, jwtVerify } from "jose";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { getDb } from "@/lib/db/client";
import { playerTokenIssuer, rotateTokenKey } from "@/lib/iam/tokens";
import type { ProjectWithKeys } from "@/lib/projects/service";
import { call, expectError, newProject } from "./helpers/api";
import { logIn, signedUp } from "./helpers/credentials-fixtures";
import { routeServer } from "./helpers/sdk-server";

let project: ProjectWithKeys;
let other: ProjectWithKeys;
let pk: string;
let sk: string;
let server: Awaited<ReturnType<typeof routeServer>>;
beforeAll(async () => {
  [project, other] = await Promise.all([newProject("tokens"), newProject("tokens, another")]);
  pk = project.keys.test.publishable;
  sk = project.keys.test.secret;
  server = await routeServer();
});
afterAll(() => server.close());

const jwksUrl = (publishableKey: string) => new URL(`${server.url}/iam/v1/${publishableKey}/jwks.json`);
const verify = (token: string, key = sk) => call("GET", "/iam/v1/verify", { key, query: { token } });

describe("offline verification with the JWKS", () => {
  it("verifies a login token with jose.createRemoteJWKSet over HTTP, for the project as audience", async () => {
    const { email, playerId } = await signedUp(pk);
    const { body } = await logIn(pk, email);
    const { payload, protectedHeader } = await jwtVerify(body.token, createRemoteJWKSet(jwksUrl(pk)), { issuer: playerTokenIssuer(), audience: project.id });
    expect(protectedHeader.alg).toBe("ES256");
    expect(payload).toMatchObject({ sub: playerId, livemode: false, sid: expect.stringMatching(/^pss_/) });
    // Not for another audience, nor with the other mode's keys, nor another project's.
    await expect(jwtVerify(body.token, createRemoteJWKSet(jwksUrl(pk)), { issuer: playerTokenIssuer(), audience: other.id })).rejects.toThrow();
    await expect(jwtVerify(body.token, createRemoteJWKSet(jwksUrl(project.keys.live.publishable)))).rejects.toThrow();
    await expect(jwtVerify(body.token, createRemoteJWKSet(jwksUrl(other.keys.test.publishable)))).rejects.toThrow();
  });

  it("keeps verifying tokens of a rotated key while new tokens use the new key", async () => {
    const { email, token: before } = await signedUp(pk);
    const oldKid = decodeProtectedHeader(before).kid;
    const { kid: newKid } = await rotateTokenKey(await getDb(), { projectId: project.id, livemode: false });
    const after = (await logIn(pk, email)).body.token as string;
    expect(decodeProtectedHeader(after).kid).toBe(newKid);
    expect(newKid).not.toBe(oldKid);
    const keys = createRemoteJWKSet(jwksUrl(pk));
    for (const token of [before, after]) await jwtVerify(token, keys, { issuer: playerTokenIssuer(), audience: project.id });
    const listed = await call("GET", `/iam/v1/${pk}/jwks.json`);
    expect(listed.body.keys.map((k: { kid: string }) => k.kid)).toEqual(expect.arrayContaining([oldKid, newKid]));
    expect((await verify(before)).status).toBe(200);
  });

  it("serves public keys only, cacheable, for a publishable key; anything else is a 404", async () => {
    const res = await call("GET", `/iam/v1/${pk}/jwks.json`);
    expect(res.status).toBe(200);
    expect(res.headers.get("cache-control")).toBe("public, max-age=300");
    for (const key of res.body.keys) {
      expect(key).toMatchObject({ kty: "EC", crv: "P-256", alg: "ES256", use: "sig", kid: expect.stringMatching(/^ptk_/) });
      expect(key).not.toHaveProperty("d");
    }
    expectError(await call("GET", `/iam/v1/${sk}/jwks.json`), 404);
    expectError(await call("GET", "/iam/v1/pk_test_nothing/jwks.json"), 404);
  });
});

describe("online verification", () => {
  it("answers the spec's verification shape, and the player at /iam/v1/auth/verify", async () => {
    const { playerId, token, email } = await signedUp(pk);
    const res = await verify(token);
    expect(res.body).toEqual({
      projectId: project.id,
      expiration: expect.any(Number),
      issuedAt: expect.any(Number),
      issuer: playerTokenIssuer(),
      sessionId: expect.stringMatching(/^pss_/),
      playerId,
      livemode: false,
    });
    expect(res.body.expiration - res.body.issuedAt).toBe(3600);
    const player = await call("GET", "/iam/v1/auth/verify", { key: sk, query: { token } });
    expect(player.body).toMatchObject({ id: playerId, object: "player", email, linkedAccounts: [{ provider: "email" }] });
  });

  it("works through the official SDK's iam.verifyAuthToken", async () => {
    const { playerId, token } = await signedUp(pk);
    const openfort = new Openfort(sk, server.url);
    const session = await openfort.iam.verifyAuthToken(token);
    expect(session).toMatchObject({ playerId, projectId: project.id, livemode: false, issuer: playerTokenIssuer(), sessionId: expect.stringMatching(/^pss_/) });
    await expect(openfort.iam.verifyAuthToken("not.a.token")).rejects.toMatchObject({ code: 401 });
  });

  it("refuses bad tokens and missing parameters, and wants a secret key", async () => {
    const { token } = await signedUp(pk);
    expect(expectError(await verify("garbage"), 401, "authentication_error").message).toMatch(/Invalid player token/);
    const tampered = `${token.slice(0, -4)}${token.slice(-4) === "AAAA" ? "BBBB" : "AAAA"}`;
    expectError(await verify(tampered), 401);
    expect(expectError(await call("GET", "/iam/v1/verify", { key: sk }), 400).details).toHaveProperty("token");
    expect(expectError(await call("GET", "/iam/v1/verify", { key: sk, query: { token, extra: "1" } }), 400).details).toHaveProperty("extra");
    expectError(await call("GET", "/iam/v1/verify", { key: pk, query: { token } }), 403, "permission_error");
    expectError(await call("GET", "/iam/v1/auth/verify", { key: pk, query: { token } }), 403);
  });

  it("keeps projects and modes apart: a test-mode token is not accepted by live keys, nor by another project", async () => {
    const { token } = await signedUp(pk);
    for (const key of [project.keys.live.secret, other.keys.test.secret]) {
      expect(expectError(await verify(token, key), 401).message).toMatch(/another project or mode/);
      expectError(await call("GET", "/iam/v1/auth/verify", { key, query: { token } }), 401);
    }
    // A live token works with live keys only.
    const live = await signedUp(project.keys.live.publishable);
    expect((await verify(live.token, project.keys.live.secret)).body.livemode).toBe(true);
    expectError(await verify(live.token), 401);
    // Signed in with the player's token, an x-project-key of another project or mode is refused.
    for (const key of [project.keys.live.publishable, other.keys.test.publishable]) {
      expectError(await call("GET", "/iam/v1/me", { key: token, headers: { "x-project-key": key } }), 401);
    }
    expect((await call("GET", "/iam/v1/me", { key: token, headers: { "x-project-key": pk } })).status).toBe(200);
  });
});

describe("sessions", () => {
  it.each(["json", "form"] as const)("refresh rotates the refresh token (%s); an old one ends the session", async (encoding) => {
    const { refreshToken, token, playerId } = await signedUp(pk);
    const refresh = (rt: string, key = pk) => call("POST", "/iam/v1/sessions", { key, basic: true, ...(encoding === "json" ? { json: { refreshToken: rt } } : { form: { refreshToken: rt } }) });
    const first = await refresh(refreshToken);
    expect(first.status, JSON.stringify(first.body)).toBe(200);
    expect(first.body).toMatchObject({ player: { id: playerId }, token: expect.any(String), refreshToken: expect.stringMatching(/^pss_/) });
    expect(first.body.refreshToken).not.toBe(refreshToken);
    const second = await refresh(first.body.refreshToken);
    expect(second.status).toBe(200);
    // The session is the same, its tokens new.
    expect((await verify(second.body.token)).body.sessionId).toBe((await verify(token)).body.sessionId);

    // Reuse of the first refresh token: refused, and the newest one dies with the session.
    expect(expectError(await refresh(refreshToken), 401).message).toMatch(/already used/);
    expect(expectError(await refresh(second.body.refreshToken), 401).message).toMatch(/ended/);
    for (const t of [token, first.body.token, second.body.token]) expectError(await verify(t), 401);
  });

  it("refuses a refresh token of another mode or project, malformed ones and a missing one", async () => {
    const { refreshToken } = await signedUp(pk);
    for (const key of [project.keys.live.publishable, other.keys.test.publishable]) {
      expectError(await call("POST", "/iam/v1/sessions", { key, basic: true, json: { refreshToken } }), 401);
    }
    for (const bad of ["x", "pss_x.notanumber.y", `${refreshToken.slice(0, -3)}abc`]) {
      expectError(await call("POST", "/iam/v1/sessions", { key: pk, basic: true, json: { refreshToken: bad } }), 401);
    }
    expect(expectError(await call("POST", "/iam/v1/sessions", { key: pk, basic: true, form: {} }), 400).details).toHaveProperty("refreshToken");
    // The session survived the refusals: they were not reuse of its own token.
    expect((await call("POST", "/iam/v1/sessions", { key: pk, basic: true, json: { refreshToken } })).status).toBe(200);
  });

  it("only a refresh token that authenticates for a past generation ends the session; knowing its id is not enough", async () => {
    const { refreshToken, token } = await signedUp(pk);
    const refresh = (rt: string) => call("POST", "/iam/v1/sessions", { key: pk, basic: true, json: { refreshToken: rt } });
    const sid = refreshToken.split(".")[0]!;
    // The session id is in every player token (sid), so anyone the game shows a token to knows it.
    expect((await verify(token)).body.sessionId).toBe(sid);
    const first = await refresh(refreshToken);
    expect(first.status).toBe(200);
    // Past generations with a made-up secret, a negative one, one from the future: refused, and the session goes on.
    for (const forged of [`${sid}.0.garbage`, `${sid}.-1.x`, `${sid}.0.${refreshToken.split(".")[2]!.slice(0, -2)}AA`, `${sid}.7.x`]) {
      const error = expectError(await refresh(forged), 401);
      expect(error.message).not.toMatch(/already used|ended/);
    }
    expect((await verify(first.body.token)).status).toBe(200);
    const second = await refresh(first.body.refreshToken);
    expect(second.status, JSON.stringify(second.body)).toBe(200);
    // The genuine token of two generations back is still recognised as reuse: the session ends.
    expect(expectError(await refresh(refreshToken), 401).message).toMatch(/already used/);
    expect(expectError(await refresh(second.body.refreshToken), 401).message).toMatch(/ended/);
  });

  it("logout ends the session: the token fails verification, /me and refresh", async () => {
    const { token, refreshToken, playerId } = await signedUp(pk);
    const me = await call("GET", "/iam/v1/me", { key: token });
    expect(me.body).toMatchObject({ id: playerId, object: "player", linkedAccounts: [{ provider: "email" }] });
    // A refresh token of another session is refused (and ends nothing).
    const { refreshToken: theirs } = await signedUp(pk);
    expect(expectError(await call("POST", "/iam/v1/sessions/logout", { key: token, json: { refreshToken: theirs } }), 400).details).toHaveProperty("refreshToken");
    const out = await call("POST", "/iam/v1/sessions/logout", { key: token, form: { refreshToken } });
    expect(out.body).toEqual({ id: expect.stringMatching(/^pss_/), object: "player_session", revoked: true });
    expect(expectError(await verify(token), 401).message).toMatch(/ended/);
    expectError(await call("GET", "/iam/v1/me", { key: token }), 401);
    expectError(await call("POST", "/iam/v1/sessions", { key: pk, basic: true, json: { refreshToken } }), 401);
    expectError(await call("POST", "/iam/v1/sessions/logout", { key: token }), 401);
    // Another session of the same player goes on.
    const { email } = (await call("GET", "/iam/v1/auth/verify", { key: sk, query: { token: (await logIn(pk, me.body.email)).body.token } })).body;
    expect(email).toBe(me.body.email);
  });

  it("/me and logout want a player token, not a key", async () => {
    for (const key of [pk, sk, undefined]) {
      expectError(await call("GET", "/iam/v1/me", { key }), 401);
      expectError(await call("POST", "/iam/v1/sessions/logout", { key, json: {} }), 401);
    }
  });

  it("deleting a player (DELETE /v1/players/{id}) ends its sessions, and frees its email", async () => {
    const { token, refreshToken, playerId, email } = await signedUp(pk);
    expect((await call("DELETE", `/v1/players/${playerId}`, { key: sk })).body).toEqual({ id: playerId, object: "player", deleted: true });
    expectError(await verify(token), 401);
    expectError(await call("GET", "/iam/v1/me", { key: token }), 401);
    expectError(await call("POST", "/iam/v1/sessions", { key: pk, basic: true, json: { refreshToken } }), 401);
    expect(expectError(await logIn(pk, email), 401).message).toBe("Invalid email or password.");
    const again = await signedUp(pk, { email });
    expect(again.playerId).not.toBe(playerId);
  });
});
