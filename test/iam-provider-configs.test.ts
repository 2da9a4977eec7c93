import { and, eq } from "drizzle-orm";
import { beforeAll, describe, expect, it } from "vitest";
import { getDb } from "@/lib/db/client";
import { oauthConfigs } from "@/lib/db/schema";
import { decrypt } from "@/lib/keys/encryption";
import type { ProjectWithKeys } from "@/lib/projects/service";
import { call, expectError, newProject } from "./helpers/api";

let a: ProjectWithKeys;
let b: ProjectWithKeys;
beforeAll(async () => {
  [a, b] = await Promise.all([newProject("providers A"), newProject("providers B")]);
});

const SECRET = "GOCSPX-client-secret-value-0042";

describe("provider configurations", () => {
  it("creates with JSON on /iam/v1/oauth and with a form on /iam/v1/config, to the same answer, secrets masked", async () => {
    const key = a.keys.test.secret;
    const json = await call("POST", "/iam/v1/oauth", { key, json: { provider: "google", enabled: true, clientId: "game.apps.example", clientSecret: SECRET } });
    expect(json.status).toBe(200);
    expect(json.body).toEqual({ id: expect.stringMatching(/^oac_/), object: "oauthConfig", provider: "google", enabled: true, clientId: "game.apps.example", clientSecret: "…0042" });
    expect(JSON.stringify(json.body)).not.toContain(SECRET);

    const form = await call("POST", "/iam/v1/config", { key: b.keys.test.secret, form: { provider: "google", enabled: "true", clientId: "game.apps.example", clientSecret: SECRET } });
    expect(form.status).toBe(200);
    const { id: _a, ...jsonRest } = json.body;
    const { id: _b, ...formRest } = form.body;
    expect(formRest).toEqual(jsonRest);
  });

  it("keeps secrets sealed at rest, bound to their configuration", async () => {
    const key = a.keys.test.secret;
    await call("POST", "/iam/v1/oauth", { key, json: { provider: "telegramMiniApp", enabled: true, botToken: "123456:telegram-bot-token-abcd" } });
    const db = await getDb();
    const [row] = await db.select().from(oauthConfigs).where(and(eq(oauthConfigs.projectId, a.id), eq(oauthConfigs.provider, "telegramMiniApp")));
    expect(row!.encryptedSecret).toMatch(/^v2\./);
    expect(JSON.stringify(row)).not.toContain("telegram-bot-token");
    expect(JSON.parse(decrypt(row!.encryptedSecret!, `oauth-config:${row!.id}`))).toEqual({ botToken: "123456:telegram-bot-token-abcd" });
    // Sealed for this row only: under another configuration's id it does not open.
    expect(() => decrypt(row!.encryptedSecret!, "oauth-config:oac_other")).toThrow();
    const got = await call("GET", "/iam/v1/oauth/telegramMiniApp", { key });
    expect(got.body).toMatchObject({ provider: "telegramMiniApp", botToken: "…abcd" });
  });

  it("creating again updates: fields sent replace, fields left out stay, an empty value clears", async () => {
    const project = await newProject();
    const key = project.keys.test.secret;
    const first = await call("POST", "/iam/v1/oauth", { key, json: { provider: "oidc", enabled: true, aud: "game", jwksUrl: "http://127.0.0.1:9/jwks", baseUrl: "http://127.0.0.1:9" } });
    expect(first.status).toBe(200);
    const second = await call("POST", "/iam/v1/oauth", { key, form: { provider: "oidc", enabled: "false", aud: "game-2", jwksUrl: "" } });
    expect(second.status).toBe(200);
    expect(second.body).toEqual({ id: first.body.id, object: "oauthConfig", provider: "oidc", enabled: false, aud: "game-2", baseUrl: "http://127.0.0.1:9" });
    const list = await call("GET", "/iam/v1/oauth", { key });
    expect(list.body).toEqual({ data: [second.body] });
    // Without its only source of keys an oidc configuration cannot verify anything: refused.
    const broken = await call("POST", "/iam/v1/oauth", { key, json: { provider: "oidc", baseUrl: "" } });
    expect(expectError(broken, 400).details).toHaveProperty("jwksUrl");
    // A secret left out is kept.
    await call("POST", "/iam/v1/oauth", { key, json: { provider: "facebook", enabled: true, clientId: "1234", clientSecret: "facebook-app-secret-9876" } });
    const kept = await call("POST", "/iam/v1/oauth", { key, json: { provider: "facebook", enabled: true, clientId: "5678" } });
    expect(kept.body).toMatchObject({ clientId: "5678", clientSecret: "…9876" });
  });

  it("lists per mode and project, gets and deletes one provider", async () => {
    const project = await newProject();
    const key = project.keys.test.secret;
    expect((await call("GET", "/iam/v1/oauth", { key })).body).toEqual({ data: [] });
    await call("POST", "/iam/v1/oauth", { key, json: { provider: "discord", enabled: true, clientId: "42", clientSecret: "discord-secret-0000-1111" } });
    await call("POST", "/iam/v1/oauth", { key, json: { provider: "playfab", enabled: true, titleId: "AB12" } });
    const list = await call("GET", "/iam/v1/oauth", { key });
    expect(list.body.data.map((c: { provider: string }) => c.provider)).toEqual(["discord", "playfab"]);
    // Live mode and other projects see none of them.
    expect((await call("GET", "/iam/v1/oauth", { key: project.keys.live.secret })).body).toEqual({ data: [] });
    expectError(await call("GET", "/iam/v1/oauth/discord", { key: a.keys.test.secret }), 404);

    const got = await call("GET", "/iam/v1/oauth/playfab", { key });
    expect(got.body).toMatchObject({ provider: "playfab", titleId: "AB12", enabled: true });
    const deleted = await call("DELETE", "/iam/v1/oauth/playfab", { key });
    expect(deleted.body).toEqual({ id: got.body.id, object: "oauthConfig", deleted: true });
    expectError(await call("GET", "/iam/v1/oauth/playfab", { key }), 404);
    expectError(await call("DELETE", "/iam/v1/oauth/playfab", { key }), 404);
    expectError(await call("GET", "/iam/v1/oauth/myspace", { key }), 404);
  });

  it("refuses bad configurations with a 400 naming the parameter", async () => {
    const key = (await newProject()).keys.test.secret;
    const bad = async (json: Record<string, unknown>, param: string) => {
      const error = expectError(await call("POST", "/iam/v1/oauth", { key, json }), 400);
      expect(Object.keys(error.details ?? {})).toContain(param);
    };
    await bad({ provider: "myspace", enabled: true }, "provider");
    await bad({ enabled: true }, "provider");
    await bad({ provider: "google", enabled: true }, "clientId");
    await bad({ provider: "google", clientId: "x", botToken: "y" }, "botToken"); // a field another provider takes
    await bad({ provider: "google", clientId: "x", enabled: "maybe" }, "enabled");
    await bad({ provider: "google", clientId: "x", baseUrl: "ftp://issuer.example" }, "baseUrl");
    await bad({ provider: "google", clientId: "x", baseUrl: "http://169.254.169.254/" }, "baseUrl");
    await bad({ provider: "facebook", clientId: "1" }, "clientSecret");
    await bad({ provider: "firebase" }, "projectId");
    await bad({ provider: "firebase", projectId: "Not A Project" }, "projectId");
    await bad({ provider: "playfab", titleId: "ab.evil.example/x" }, "titleId");
    await bad({ provider: "telegramMiniApp" }, "botToken");
    await bad({ provider: "telegramMiniApp", botToken: "t", maxAgeSeconds: 5 }, "maxAgeSeconds");
    await bad({ provider: "oidc", aud: "x", publicVerificationKey: "not a key" }, "publicVerificationKey");
    await bad({ provider: "custom", authenticationUrl: "http://127.0.0.1:9/auth", headers: "no colon here" }, "headers");
    await bad({ provider: "custom", aud: "x" }, "jwksUrl");
    const form = expectError(await call("POST", "/iam/v1/config", { key, form: { provider: "google" } }), 400);
    expect(form.details).toHaveProperty("clientId");
  });

  it("live keys: every URL of a configuration must be https to a public address", async () => {
    const key = a.keys.live.secret;
    for (const [field, value] of [
      ["baseUrl", "http://accounts.example.com"],
      ["baseUrl", "https://127.0.0.1"],
      ["baseUrl", "https://10.1.2.3/issuer"],
      ["jwksUrl", "https://[::1]/jwks"],
    ] as const) {
      const body = field === "baseUrl" ? { provider: "oidc", aud: "game", [field]: value } : { provider: "oidc", aud: "game", [field]: value };
      const error = expectError(await call("POST", "/iam/v1/oauth", { key, json: body }), 400);
      expect(error.details).toHaveProperty(field);
    }
    const supabase = expectError(await call("POST", "/iam/v1/oauth", { key, json: { provider: "supabase", url: "http://localhost:54321" } }), 400);
    expect(supabase.details).toHaveProperty("url");
    // The test key may point at a local provider.
    const local = await call("POST", "/iam/v1/oauth", { key: a.keys.test.secret, json: { provider: "supabase", url: "http://localhost:54321", jwtSecret: "super-secret-jwt-token-with-at-least-32-characters" } });
    expect(local.status).toBe(200);
    expect(local.body).toMatchObject({ url: "http://localhost:54321", jwtSecret: "…ters" });
  });

  it("needs the secret key", async () => {
    expectError(await call("GET", "/iam/v1/oauth", {}), 401);
    expectError(await call("POST", "/iam/v1/oauth", { key: a.keys.test.publishable, json: { provider: "google", clientId: "x" } }), 403);
  });
});
