import crypto from "node:crypto";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ProjectWithKeys } from "@/lib/projects/service";
import { call, expectError, newProject } from "./helpers/api";

/**
 * Telegram's HMAC-signed sign-in data (computed here with a bot token: that is the protocol), and
 * the opaque-token providers against a local HTTP peer that implements each one's verification
 * endpoint, configured through `baseUrl` as a developer would point at a staging environment.
 */

const BOT_TOKEN = "7012345678:AAH-telegram-bot-token-for-tests";
const PLAYFAB_SECRET = "playfab-title-secret-key-0001";
const FB_SECRET = "fb-app-secret-0000-1111";
const CUSTOM_KEY = "custom-key-123456789";

interface Seen {
  method: string;
  path: string;
  headers: http.IncomingHttpHeaders;
  body: string;
}
const seen: Seen[] = [];
let peer: http.Server;
let peerUrl: string;
let project: ProjectWithKeys;
let sk: string;

function json(res: http.ServerResponse, status: number, body: unknown) {
  res.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify(body));
}

/** Each provider's verification endpoint, with the tokens it knows. */
function answer(req: Seen, url: URL, res: http.ServerResponse) {
  const bearer = req.headers.authorization?.replace(/^Bearer /, "");
  switch (`${req.method} ${url.pathname}`) {
    case "POST /Server/AuthenticateSessionTicket": {
      if (req.headers["x-secretkey"] !== PLAYFAB_SECRET) return json(res, 401, { code: 401, error: "NotAuthenticated" });
      const ticket = (JSON.parse(req.body) as { SessionTicket: string }).SessionTicket;
      if (ticket === "ticket-crash") return json(res, 500, { code: 500 });
      if (ticket === "ticket-expired") return json(res, 200, { code: 200, data: { UserInfo: { PlayFabId: "PF2" }, IsSessionTicketExpired: true } });
      if (ticket !== "ticket-valid") return json(res, 400, { code: 400, errorCode: 1100, error: "InvalidSessionTicket" });
      return json(res, 200, { code: 200, data: { UserInfo: { PlayFabId: "PF1", PrivateInfo: { Email: "pf@example.com" }, TitleInfo: { DisplayName: "Fab" } }, IsSessionTicketExpired: false } });
    }
    case "POST /Client/GetAccountInfo":
      if (req.headers["x-authorization"] !== "ticket-valid") return json(res, 401, { code: 401, error: "NotAuthenticated" });
      return json(res, 200, { code: 200, data: { AccountInfo: { PlayFabId: "PF1" } } });
    case "GET /game/player/info":
      if (req.headers["x-session-token"] !== "ll-session") return json(res, 401, { success: false, error: "unauthorized" });
      return json(res, 200, { id: 4242, name: "Locker", public_uid: "TSEYDXD8" });
    case "GET /2/users/me":
      if (bearer !== "tw-token") return json(res, 401, { title: "Unauthorized" });
      return json(res, 200, { data: { id: "T1", name: "Tweeter", username: "tweeter" } });
    case "GET /debug_token": {
      if (url.searchParams.get("access_token") !== `fb-app|${FB_SECRET}`) return json(res, 400, { error: { message: "Invalid OAuth access token" } });
      const input = url.searchParams.get("input_token");
      if (input === "fb-user") return json(res, 200, { data: { app_id: "fb-app", is_valid: true, user_id: "FB1" } });
      if (input === "fb-other-app") return json(res, 200, { data: { app_id: "someone-else", is_valid: true, user_id: "FB1" } });
      return json(res, 200, { data: { is_valid: false } });
    }
    case "GET /me":
      if (url.searchParams.get("access_token") !== "fb-user") return json(res, 400, { error: {} });
      return json(res, 200, { id: "FB1", name: "Face", email: "face@example.com" });
    case "GET /api/oauth2/@me":
      if (bearer === "dc-token") return json(res, 200, { application: { id: "dc-app" }, user: { id: "D1" } });
      if (bearer === "dc-other") return json(res, 200, { application: { id: "another-app" }, user: { id: "D1" } });
      return json(res, 401, { message: "401: Unauthorized" });
    case "GET /api/users/@me":
      return bearer === "dc-token" ? json(res, 200, { id: "D1", username: "dee", email: "dee@example.com", verified: true }) : json(res, 401, {});
    case "POST /epic/oauth/v2/tokenInfo": {
      const token = new URLSearchParams(req.body).get("token");
      if (token === "ep-token") return json(res, 200, { active: true, client_id: "ep-client", account_id: "E1" });
      if (token === "ep-other") return json(res, 200, { active: true, client_id: "another-client", account_id: "E1" });
      return json(res, 200, { active: false });
    }
    case "POST /custom/auth": {
      if (req.headers["x-api-key"] !== CUSTOM_KEY) return json(res, 403, { error: "bad key" });
      const payload = (JSON.parse(req.body) as { payload: string }).payload;
      return payload === "cu-token" ? json(res, 200, { userId: "C1", email: "cu@example.com" }) : json(res, 401, { error: "bad token" });
    }
    default:
      return json(res, 404, {});
  }
}

beforeAll(async () => {
  peer = http.createServer(async (req, res) => {
    let body = "";
    for await (const chunk of req) body += chunk;
    const url = new URL(req.url ?? "/", "http://peer");
    const entry = { method: req.method ?? "", path: url.pathname, headers: req.headers, body };
    seen.push(entry);
    answer(entry, url, res);
  });
  await new Promise<void>((r) => peer.listen(0, "127.0.0.1", r));
  peerUrl = `http://127.0.0.1:${(peer.address() as AddressInfo).port}`;
  project = await newProject("opaque providers");
  sk = project.keys.test.secret;
  for (const json of [
    { provider: "telegramMiniApp", enabled: true, botToken: BOT_TOKEN },
    { provider: "telegram", enabled: true, botToken: BOT_TOKEN },
    { provider: "playfab", enabled: true, titleId: "AB12", secretKey: PLAYFAB_SECRET, baseUrl: peerUrl },
    { provider: "lootlocker", enabled: true, baseUrl: peerUrl },
    { provider: "twitter", enabled: true, clientId: "tw-client", clientSecret: "tw-secret-0000-1111", baseUrl: peerUrl },
    { provider: "facebook", enabled: true, clientId: "fb-app", clientSecret: FB_SECRET, baseUrl: peerUrl },
    { provider: "discord", enabled: true, clientId: "dc-app", clientSecret: "dc-secret-0000-1111", baseUrl: peerUrl },
    { provider: "epic_games", enabled: true, clientId: "ep-client", clientSecret: "ep-secret-0000-1111", baseUrl: peerUrl },
    { provider: "custom", enabled: true, authenticationUrl: `${peerUrl}/custom/auth`, headers: `X-Api-Key: ${CUSTOM_KEY}` },
  ]) {
    const res = await call("POST", "/iam/v1/oauth", { key: sk, json });
    if (res.status !== 200) throw new Error(JSON.stringify(res.body));
  }
});

afterAll(() => new Promise<void>((r) => peer.close(() => r())));

const authorize = (provider: string, token: string, key = sk) => call("POST", `/iam/v1/oauth/${provider}/authorize`, { key, json: { token } });
const linked = async (token: string) => (await call("POST", "/iam/v1/authorize", { key: sk, json: { authorizationCode: token } })).body.linkedAccounts;

/** Mini App init data as Telegram signs it: HMAC_SHA256(HMAC_SHA256("WebAppData", botToken), data_check_string). */
function miniAppInitData(fields: Record<string, string>, botToken = BOT_TOKEN) {
  const check = Object.keys(fields).sort().map((k) => `${k}=${fields[k]}`).join("\n");
  const secret = crypto.createHmac("sha256", "WebAppData").update(botToken).digest();
  return new URLSearchParams({ ...fields, hash: crypto.createHmac("sha256", secret).update(check).digest("hex") }).toString();
}
const user = (id: number) => JSON.stringify({ id, first_name: "Tele", last_name: "Gram", username: "telegram_user" });
const now = () => String(Math.floor(Date.now() / 1000));

describe("Telegram", () => {
  it("telegramMiniApp: signed init data signs the player in; verify finds them", async () => {
    const data = miniAppInitData({ query_id: "AAHdF6IQAAAAAN0XohDhrOrc", user: user(777000), auth_date: now() });
    const res = await authorize("telegramMiniApp", data);
    expect(res.status).toBe(200);
    expect(await linked(res.body.token)).toEqual([expect.objectContaining({ provider: "telegramMiniApp", externalUserId: "777000", email: null })]);
    const verified = await call("POST", "/iam/v1/oauth/verify", { key: sk, form: { provider: "telegramMiniApp", token: data, tokenType: "customToken" } });
    expect(verified.body).toMatchObject({ id: res.body.playerId, name: "Tele Gram" });
  });

  it("refuses init data that was changed, signed for another bot, stale or unsigned", async () => {
    const fields = { user: user(777001), auth_date: now() };
    const tampered = miniAppInitData(fields).replace(encodeURIComponent('"id":777001'), encodeURIComponent('"id":1'));
    expect(tampered).not.toBe(miniAppInitData(fields));
    expect(expectError(await authorize("telegramMiniApp", tampered), 401).message).toContain("hash does not match");
    expectError(await authorize("telegramMiniApp", miniAppInitData(fields, "999:another-bot")), 401);
    const stale = miniAppInitData({ user: user(777001), auth_date: String(Math.floor(Date.now() / 1000) - 2 * 86_400) });
    expect(expectError(await authorize("telegramMiniApp", stale), 401).message).toContain("older than");
    expectError(await authorize("telegramMiniApp", `user=${encodeURIComponent(user(777001))}&auth_date=${now()}`), 401);
    // Login Widget data is keyed differently: it does not pass as Mini App data.
    const widget = loginWidget({ id: "777001", first_name: "Tele", auth_date: now() });
    expectError(await authorize("telegramMiniApp", new URLSearchParams(widget).toString()), 401);
  });

  it("telegram (Login Widget): fields as JSON or a query string, HMAC keyed by SHA256(botToken)", async () => {
    const fields = loginWidget({ id: "555", first_name: "Wid", username: "widget", auth_date: now() });
    const asJson = await authorize("telegram", JSON.stringify({ ...fields, id: 555 }));
    expect(asJson.status).toBe(200);
    const asQuery = await authorize("telegram", new URLSearchParams(fields).toString());
    expect(asQuery.body.playerId).toBe(asJson.body.playerId);
    expectError(await authorize("telegram", JSON.stringify({ ...fields, id: 556 })), 401);
  });
});

function loginWidget(fields: Record<string, string>, botToken = BOT_TOKEN): Record<string, string> {
  const check = Object.keys(fields).sort().map((k) => `${k}=${fields[k]}`).join("\n");
  const secret = crypto.createHash("sha256").update(botToken).digest();
  return { ...fields, hash: crypto.createHmac("sha256", secret).update(check).digest("hex") };
}

describe("opaque-token providers (asked at their verification endpoint)", () => {
  it("playfab: AuthenticateSessionTicket with the title's secret key", async () => {
    seen.length = 0;
    const res = await authorize("playfab", "ticket-valid");
    expect(res.status).toBe(200);
    expect(await linked(res.body.token)).toEqual([expect.objectContaining({ provider: "playfab", externalUserId: "PF1", email: "pf@example.com" })]);
    expect(seen[0]).toMatchObject({ method: "POST", path: "/Server/AuthenticateSessionTicket", body: JSON.stringify({ SessionTicket: "ticket-valid" }) });
    expect(seen[0]!.headers["x-secretkey"]).toBe(PLAYFAB_SECRET);
    expectError(await authorize("playfab", "ticket-forged"), 401);
    expect(expectError(await authorize("playfab", "ticket-expired"), 401).message).toContain("expired");
    const down = expectError(await authorize("playfab", "ticket-crash"), 502, "api_error");
    expect(down.message).toContain(peerUrl);
  });

  it("playfab without a secret key: the ticket authorizes GetAccountInfo itself", async () => {
    const p = await newProject();
    await call("POST", "/iam/v1/oauth", { key: p.keys.test.secret, json: { provider: "playfab", titleId: "AB12", baseUrl: peerUrl } });
    const res = await authorize("playfab", "ticket-valid", p.keys.test.secret);
    expect(res.status).toBe(200);
    expectError(await authorize("playfab", "ticket-forged", p.keys.test.secret), 401);
  });

  it("lootlocker, twitter: the player the provider names", async () => {
    const ll = await authorize("lootlocker", "ll-session");
    expect(await linked(ll.body.token)).toEqual([expect.objectContaining({ provider: "lootlocker", externalUserId: "4242" })]);
    expectError(await authorize("lootlocker", "ll-other"), 401);
    const tw = await authorize("twitter", "tw-token");
    expect(await linked(tw.body.token)).toEqual([expect.objectContaining({ provider: "twitter", externalUserId: "T1" })]);
    expectError(await authorize("twitter", "tw-forged"), 401);
  });

  it("facebook, discord, epic_games: the token must be issued to the configured app", async () => {
    const fb = await authorize("facebook", "fb-user");
    expect(await linked(fb.body.token)).toEqual([expect.objectContaining({ provider: "facebook", externalUserId: "FB1", email: "face@example.com" })]);
    expect(expectError(await authorize("facebook", "fb-other-app"), 401).message).toContain("another app");
    expectError(await authorize("facebook", "fb-garbage"), 401);

    const dc = await authorize("discord", "dc-token");
    expect(await linked(dc.body.token)).toEqual([expect.objectContaining({ provider: "discord", externalUserId: "D1", email: "dee@example.com" })]);
    expect(expectError(await authorize("discord", "dc-other"), 401).message).toContain("another application");
    expectError(await authorize("discord", "dc-garbage"), 401);

    const ep = await authorize("epic_games", "ep-token");
    expect(await linked(ep.body.token)).toEqual([expect.objectContaining({ provider: "epic_games", externalUserId: "E1" })]);
    expect(expectError(await authorize("epic_games", "ep-other"), 401).message).toContain("another client");
    expectError(await authorize("epic_games", "ep-expired"), 401);
  });

  it("custom: the developer's authentication URL vouches for the token, with the configured headers", async () => {
    seen.length = 0;
    const res = await authorize("custom", "cu-token");
    expect(await linked(res.body.token)).toEqual([expect.objectContaining({ provider: "custom", externalUserId: "C1" })]);
    expect(seen[0]!.headers["x-api-key"]).toBe(CUSTOM_KEY);
    expect(JSON.parse(seen[0]!.body)).toEqual({ payload: "cu-token" });
    expectError(await authorize("custom", "cu-forged"), 401);
    const got = await call("GET", "/iam/v1/oauth/custom", { key: sk });
    expect(JSON.stringify(got.body)).not.toContain(CUSTOM_KEY);
  });

  it("an unreachable provider is a 502 naming only its origin", async () => {
    const p = await newProject();
    await call("POST", "/iam/v1/oauth", { key: p.keys.test.secret, json: { provider: "twitter", baseUrl: "http://127.0.0.1:9/secret-path" } });
    const error = expectError(await authorize("twitter", "tw-token", p.keys.test.secret), 502, "api_error");
    expect(error.message).toContain("could not be reached");
    expect(error.message).not.toContain("secret-path");
  });
});
