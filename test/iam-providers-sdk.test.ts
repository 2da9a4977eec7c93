import Openfort from "@openfort/openfort-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ProjectWithKeys } from "@/lib/projects/service";
import { call, newProject } from "./helpers/api";
import { startIssuer, type TestIssuer } from "./helpers/oidc-issuer";
import { routeServer } from "./helpers/sdk-server";

/** The official SDK's `openfort.iam.*` admin calls, unchanged, against the real route handlers. */

const SECRET = "sdk-google-client-secret-7777";
let server: Awaited<ReturnType<typeof routeServer>>;
let issuer: TestIssuer;
let project: ProjectWithKeys;
let openfort: Openfort;

beforeAll(async () => {
  [server, issuer, project] = await Promise.all([
    routeServer(),
    startIssuer({ clients: [{ client_id: "sdk-game", client_secret: SECRET }], accounts: { erin: { email: "erin@example.com", email_verified: true, name: "Erin" } } }),
    newProject("iam sdk"),
  ]);
  openfort = new Openfort(project.keys.test.secret, server.url);
});

afterAll(async () => {
  await Promise.all([server?.close(), issuer?.close()]);
});

describe("the official SDK's identity admin calls", () => {
  it("configures providers: createOAuthConfig, listOAuthConfig, getOAuthConfig, deleteOAuthConfig", async () => {
    // The SDK sends only AuthConfig's own fields: for Google the issuer override rides in baseUrl.
    const created = await openfort.iam.createOAuthConfig({ provider: "google", enabled: true, clientId: "sdk-game", clientSecret: SECRET, baseUrl: issuer.issuer } as never);
    expect(created).toMatchObject({ provider: "google", enabled: true, clientId: "sdk-game", clientSecret: "…7777", baseUrl: issuer.issuer });
    await openfort.iam.createOAuthConfig({ provider: "playfab", enabled: false, titleId: "AB12" } as never);
    const list = await openfort.iam.listOAuthConfig();
    expect(list.data.map((c) => (c as { provider: string }).provider).sort()).toEqual(["google", "playfab"]);
    expect(JSON.stringify(list)).not.toContain(SECRET);
    const got = await openfort.iam.getOAuthConfig("google");
    expect(got).toMatchObject({ provider: "google", clientSecret: "…7777" });
    await openfort.iam.deleteOAuthConfig("playfab" as never);
    await expect(openfort.iam.getOAuthConfig("playfab" as never)).rejects.toMatchObject({ code: 404 });
  });

  it("verifyOAuthToken and authorize with a player signed in by an ID token from a real OpenID provider", async () => {
    const idToken = await issuer.idToken("sdk-game", "erin");
    await expect(openfort.iam.verifyOAuthToken({ provider: "google" as never, token: idToken, tokenType: "idToken" })).rejects.toMatchObject({ code: 404 }); // no player yet
    const signIn = await call("POST", "/iam/v1/oauth/google/authorize", { key: project.keys.test.secret, json: { token: idToken } });
    expect(signIn.status).toBe(200);

    const player = await openfort.iam.verifyOAuthToken({ provider: "google" as never, token: await issuer.idToken("sdk-game", "erin"), tokenType: "idToken" });
    expect(player).toMatchObject({ id: signIn.body.playerId, object: "player", name: "Erin" });
    await expect(openfort.iam.verifyOAuthToken({ provider: "google" as never, token: "forged.token.value", tokenType: "idToken" })).rejects.toMatchObject({ code: 401 });

    const authorized = await openfort.iam.authorize({ authorizationCode: signIn.body.token });
    expect(authorized).toMatchObject({ id: signIn.body.playerId, object: "player" });
    expect(authorized.linkedAccounts).toEqual([expect.objectContaining({ provider: "google", email: "erin@example.com" })]);
  });

  it("players: createAuthPlayer (with a pre-generated account), getAuthPlayers, deleteAuthPlayer", async () => {
    // The SDK insists on a Shield configuration to pre-generate; it is used only for an answer with a
    // recoveryShare, and ours has none (the account's owner key is the service's, sealed), so Shield is never called.
    const shield = { shieldAuthProvider: "openfort", apiKey: "unused", apiSecret: "unused" } as never;
    const created = await openfort.iam.createAuthPlayer({ thirdPartyUserId: "sdk-user-1", thirdPartyProvider: "firebase", preGenerateEmbeddedAccount: true, chainId: 31337, metadata: { tier: "gold" } }, shield);
    expect(created).toMatchObject({ id: expect.stringMatching(/^pla_/), object: "player", linkedAccounts: [expect.objectContaining({ provider: "firebase", externalUserId: "sdk-user-1" })] });
    expect(created.player?.accounts).toHaveLength(1);
    await expect(openfort.iam.createAuthPlayer({ thirdPartyUserId: "sdk-user-1", thirdPartyProvider: "firebase", preGenerateEmbeddedAccount: false })).rejects.toMatchObject({ code: 409 });

    const listed = await openfort.iam.getAuthPlayers({ externalUserId: "sdk-user-1", limit: 5 });
    expect(listed).toMatchObject({ object: "list", total: 1 });
    expect(listed.data.map((p) => p.id)).toEqual([created.id]);

    const deleted = await openfort.iam.deleteAuthPlayer(created.id);
    expect(deleted).toMatchObject({ id: created.id, object: "player" });
    expect((await openfort.iam.getAuthPlayers({ externalUserId: "sdk-user-1" })).total).toBe(0);
  });
});
