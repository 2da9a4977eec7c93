import { isObject, providerRequest, safeOrigin, type ProviderAnswer } from "./http";
import { ProviderUnavailable, TokenRejected, type ProviderConfig, type VerifiedIdentity, type VerifyOptions } from "./types";

/**
 * Providers whose tokens are opaque: the provider itself says whether a token is good, at its
 * verification endpoint under the configuration's `baseUrl` (the public default below when not
 * set). Where the provider can tell which app a token was issued to, that app must be ours
 * (`clientId`): a token a player granted some other app does not sign them in here.
 *
 * | provider   | default base URL                      | request                                                                                 |
 * |------------|---------------------------------------|-----------------------------------------------------------------------------------------|
 * | playfab    | https://<titleId>.playfabapi.com      | POST /Server/AuthenticateSessionTicket (X-SecretKey) or, without a secret key, POST /Client/GetAccountInfo (X-Authorization: ticket) |
 * | lootlocker | https://api.lootlocker.io             | GET /game/player/info (x-session-token)                                                  |
 * | twitter    | https://api.twitter.com               | GET /2/users/me (Bearer)                                                                 |
 * | facebook   | https://graph.facebook.com            | GET /debug_token (app token clientId|clientSecret: the token's app must be clientId), then GET /me |
 * | discord    | https://discord.com                   | GET /api/oauth2/@me (the token's application must be clientId), then GET /api/users/@me  |
 * | epic_games | https://api.epicgames.dev             | POST /epic/oauth/v2/tokenInfo (form token=…; active, client_id must be clientId)         |
 * | custom     | (its authenticationUrl)               | POST {"payload": token} with the configured headers; answers {userId, email?}            |
 */

export const DEFAULT_BASE_URLS: Record<string, (config: ProviderConfig) => string> = {
  playfab: (c) => `https://${c.settings.titleId ?? ""}.playfabapi.com`,
  lootlocker: () => "https://api.lootlocker.io",
  twitter: () => "https://api.twitter.com",
  facebook: () => "https://graph.facebook.com",
  discord: () => "https://discord.com",
  epic_games: () => "https://api.epicgames.dev",
};

const base = (config: ProviderConfig) => (config.baseUrl ?? DEFAULT_BASE_URLS[config.provider]!(config)).replace(/\/+$/, "");
const str = (v: unknown) => (typeof v === "string" && v.length > 0 ? v : null);
const idText = (v: unknown) => (typeof v === "number" && Number.isSafeInteger(v) ? String(v) : str(v));

/**
 * A provider's verdict from its HTTP status: 2xx is an answer to read, 400/401/403/404 a refused
 * token, anything else (5xx, 429, redirects) the provider not answering the question.
 */
function verdict(answer: ProviderAnswer, url: string, what: string): Record<string, unknown> {
  if (answer.status >= 200 && answer.status < 300) {
    if (!isObject(answer.json)) throw new ProviderUnavailable(`${what} at ${safeOrigin(url)} answered without a JSON object`);
    return answer.json;
  }
  if ([400, 401, 403, 404].includes(answer.status)) throw new TokenRejected(`${what} refused it (${answer.status})`);
  throw new ProviderUnavailable(`${what} at ${safeOrigin(url)} answered ${answer.status}`);
}

async function ask(url: string, init: Parameters<typeof providerRequest>[1], opts: VerifyOptions, what: string) {
  return verdict(await providerRequest(url, init, opts.livemode), url, what);
}

async function playfab(config: ProviderConfig, token: string, opts: VerifyOptions): Promise<VerifiedIdentity> {
  const secretKey = config.secrets.secretKey;
  const url = `${base(config)}${secretKey ? "/Server/AuthenticateSessionTicket" : "/Client/GetAccountInfo"}`;
  const headers: Record<string, string> = { "content-type": "application/json", ...(secretKey ? { "x-secretkey": secretKey } : { "x-authorization": token }) };
  const body = await ask(url, { method: "POST", headers, body: JSON.stringify(secretKey ? { SessionTicket: token } : {}) }, opts, "PlayFab");
  const data = isObject(body.data) ? body.data : {};
  if (data.IsSessionTicketExpired === true) throw new TokenRejected("PlayFab says the session ticket has expired");
  const info = isObject(data.UserInfo) ? data.UserInfo : isObject(data.AccountInfo) ? data.AccountInfo : {};
  const id = str(info.PlayFabId);
  if (!id) throw new ProviderUnavailable("PlayFab's answer names no PlayFabId");
  const privateInfo = isObject(info.PrivateInfo) ? info.PrivateInfo : {};
  const titleInfo = isObject(info.TitleInfo) ? info.TitleInfo : {};
  return { externalUserId: id, email: str(privateInfo.Email)?.toLowerCase() ?? null, emailVerified: false, name: str(titleInfo.DisplayName) };
}

async function lootlocker(config: ProviderConfig, token: string, opts: VerifyOptions): Promise<VerifiedIdentity> {
  const body = await ask(`${base(config)}/game/player/info`, { headers: { "x-session-token": token } }, opts, "LootLocker");
  if (body.success === false) throw new TokenRejected("LootLocker refused the session token");
  const info = isObject(body.info) ? body.info : body;
  const id = idText(info.id) ?? idText(info.player_id) ?? str(info.ulid);
  if (!id) throw new ProviderUnavailable("LootLocker's answer names no player id");
  return { externalUserId: id, email: null, emailVerified: false, name: str(info.name) ?? str(info.player_name) };
}

async function twitter(config: ProviderConfig, token: string, opts: VerifyOptions): Promise<VerifiedIdentity> {
  const body = await ask(`${base(config)}/2/users/me`, { headers: { authorization: `Bearer ${token}` } }, opts, "Twitter");
  const data = isObject(body.data) ? body.data : {};
  const id = str(data.id);
  if (!id) throw new ProviderUnavailable("Twitter's answer names no user id");
  return { externalUserId: id, email: null, emailVerified: false, name: str(data.name) ?? str(data.username) };
}

async function facebook(config: ProviderConfig, token: string, opts: VerifyOptions): Promise<VerifiedIdentity> {
  const appToken = `${config.clientId ?? ""}|${config.secrets.clientSecret ?? ""}`;
  const debug = await ask(`${base(config)}/debug_token?${new URLSearchParams({ input_token: token, access_token: appToken })}`, {}, opts, "Facebook");
  const data = isObject(debug.data) ? debug.data : {};
  if (data.is_valid !== true) throw new TokenRejected("Facebook says the token is not valid");
  if (idText(data.app_id) !== config.clientId) throw new TokenRejected("Facebook issued it to another app than the configured clientId");
  const userId = idText(data.user_id);
  if (!userId) throw new TokenRejected("it is not a user's token");
  const me = await ask(`${base(config)}/me?${new URLSearchParams({ fields: "id,name,email", access_token: token })}`, {}, opts, "Facebook");
  if (idText(me.id) !== userId) throw new ProviderUnavailable("Facebook's /me names another user than debug_token");
  return { externalUserId: userId, email: str(me.email)?.toLowerCase() ?? null, emailVerified: false, name: str(me.name) };
}

async function discord(config: ProviderConfig, token: string, opts: VerifyOptions): Promise<VerifiedIdentity> {
  const headers = { authorization: `Bearer ${token}` };
  const grant = await ask(`${base(config)}/api/oauth2/@me`, { headers }, opts, "Discord");
  const application = isObject(grant.application) ? grant.application : {};
  if (idText(application.id) !== config.clientId) throw new TokenRejected("Discord issued it to another application than the configured clientId");
  const user = await ask(`${base(config)}/api/users/@me`, { headers }, opts, "Discord");
  const id = idText(user.id);
  if (!id) throw new ProviderUnavailable("Discord's answer names no user id");
  const email = str(user.email)?.toLowerCase() ?? null;
  return { externalUserId: id, email, emailVerified: email !== null && user.verified === true, name: str(user.global_name) ?? str(user.username) };
}

async function epicGames(config: ProviderConfig, token: string, opts: VerifyOptions): Promise<VerifiedIdentity> {
  const info = await ask(
    `${base(config)}/epic/oauth/v2/tokenInfo`,
    { method: "POST", headers: { "content-type": "application/x-www-form-urlencoded" }, body: new URLSearchParams({ token }).toString() },
    opts,
    "Epic Games",
  );
  if (info.active !== true) throw new TokenRejected("Epic Games says the token is not active");
  if (str(info.client_id) !== config.clientId) throw new TokenRejected("Epic Games issued it to another client than the configured clientId");
  const id = str(info.account_id);
  if (!id) throw new TokenRejected("it is not an Epic account's token");
  return { externalUserId: id, email: null, emailVerified: false, name: null };
}

/** Custom headers as configured: a JSON object, or `Name: value` lines. Null when unreadable. */
export function parseHeaders(text: string | undefined): Record<string, string> | null {
  if (!text?.trim()) return {};
  const trimmed = text.trim();
  const out: Record<string, string> = {};
  if (trimmed.startsWith("{")) {
    try {
      const parsed = JSON.parse(trimmed) as unknown;
      if (!isObject(parsed)) return null;
      for (const [name, value] of Object.entries(parsed)) {
        if (typeof value !== "string") return null;
        out[name] = value;
      }
    } catch {
      return null;
    }
  } else {
    for (const line of trimmed.split(/\r?\n/)) {
      const at = line.indexOf(":");
      if (at <= 0) return null;
      out[line.slice(0, at).trim()] = line.slice(at + 1).trim();
    }
  }
  // Names and values must be sendable as HTTP headers.
  const valid = Object.entries(out).every(([n, v]) => /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/.test(n) && !/[\r\n\0]/.test(v));
  return valid ? out : null;
}

async function customEndpoint(config: ProviderConfig, token: string, opts: VerifyOptions): Promise<VerifiedIdentity> {
  const url = config.settings.authenticationUrl!;
  const headers = parseHeaders(config.secrets.headers) ?? {};
  const body = await ask(url, { method: "POST", headers: { ...headers, "content-type": "application/json" }, body: JSON.stringify({ payload: token }) }, opts, "The authentication URL");
  const id = idText(body.userId);
  if (!id) throw new TokenRejected("the authentication URL answered no userId");
  return { externalUserId: id, email: str(body.email)?.toLowerCase() ?? null, emailVerified: false, name: str(body.name) };
}

const VERIFIERS: Record<string, (config: ProviderConfig, token: string, opts: VerifyOptions) => Promise<VerifiedIdentity>> = {
  playfab,
  lootlocker,
  twitter,
  facebook,
  discord,
  epic_games: epicGames,
  custom: customEndpoint,
};

export function verifyOpaqueToken(config: ProviderConfig, token: string, opts: VerifyOptions): Promise<VerifiedIdentity> {
  return VERIFIERS[config.provider]!(config, token, opts);
}
