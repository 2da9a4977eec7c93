import crypto from "node:crypto";
import { TokenRejected, type ProviderConfig, type VerifiedIdentity } from "./types";

/**
 * Telegram signs what it hands a Mini App or the Login Widget with a key derived from the bot's
 * token, which only Telegram and the bot's owner hold:
 *
 * - telegramMiniApp: the token is `Telegram.WebApp.initData` (a query string). secret =
 *   HMAC_SHA256(key "WebAppData", botToken); hash = hex HMAC_SHA256(secret, data_check_string).
 * - telegram (Login Widget): the token is the widget's fields as a query string or a JSON object.
 *   secret = SHA256(botToken); hash = hex HMAC_SHA256(secret, data_check_string).
 *
 * data_check_string is every field but `hash` as `key=value`, sorted by key, joined by "\n".
 * `auth_date` must be at most `maxAgeSeconds` old (default one day), so leaked data expires.
 */

export const DEFAULT_MAX_AGE_SECONDS = 86_400;
/** Sign-in data dated this far in the future is refused (clocks disagree by less). */
const FUTURE_LEEWAY_SECONDS = 60;
const MAX_FIELDS = 50;

function fieldsOf(provider: string, token: string): Map<string, string> {
  const fields = new Map<string, string>();
  const trimmed = token.trim();
  if (provider === "telegram" && trimmed.startsWith("{")) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(trimmed);
    } catch {
      throw new TokenRejected("it is neither a query string nor a JSON object of the widget's fields");
    }
    if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) throw new TokenRejected("it is not an object of the widget's fields");
    for (const [key, value] of Object.entries(parsed)) {
      if (value !== null && value !== undefined) fields.set(key, String(value));
    }
  } else {
    for (const [key, value] of new URLSearchParams(trimmed)) {
      if (fields.has(key)) throw new TokenRejected(`its field ${key.slice(0, 40)} appears twice`);
      fields.set(key, value);
    }
  }
  if (fields.size > MAX_FIELDS) throw new TokenRejected("it has too many fields");
  return fields;
}

export function dataCheckString(fields: Map<string, string>): string {
  return [...fields.entries()]
    .filter(([key]) => key !== "hash")
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([key, value]) => `${key}=${value}`)
    .join("\n");
}

export function telegramSecret(provider: string, botToken: string): Buffer {
  return provider === "telegramMiniApp"
    ? crypto.createHmac("sha256", "WebAppData").update(botToken).digest()
    : crypto.createHash("sha256").update(botToken).digest();
}

function telegramUser(provider: string, fields: Map<string, string>): { id: string; name: string | null } {
  let user: Record<string, unknown>;
  if (provider === "telegramMiniApp") {
    try {
      user = JSON.parse(fields.get("user") ?? "") as Record<string, unknown>;
    } catch {
      throw new TokenRejected("its user field is not JSON");
    }
  } else {
    user = Object.fromEntries(fields);
  }
  const id = user?.id;
  if ((typeof id !== "number" || !Number.isSafeInteger(id)) && (typeof id !== "string" || !/^\d{1,20}$/.test(id))) {
    throw new TokenRejected("it names no Telegram user id");
  }
  const name = [user.first_name, user.last_name].filter((p): p is string => typeof p === "string" && p.length > 0).join(" ");
  return { id: String(id), name: name || (typeof user.username === "string" ? user.username : null) };
}

export function verifyTelegramData(config: ProviderConfig, token: string, now = Date.now()): VerifiedIdentity {
  const botToken = config.secrets.botToken;
  if (!botToken) throw new TokenRejected("the configuration has no bot token");
  const fields = fieldsOf(config.provider, token);
  const hash = fields.get("hash") ?? "";
  if (!/^[0-9a-f]{64}$/i.test(hash)) throw new TokenRejected("it carries no hash");
  const expected = crypto.createHmac("sha256", telegramSecret(config.provider, botToken)).update(dataCheckString(fields)).digest();
  if (!crypto.timingSafeEqual(expected, Buffer.from(hash, "hex"))) throw new TokenRejected("its hash does not match: it was not signed for this bot, or was changed");
  const authDate = Number(fields.get("auth_date"));
  if (!Number.isSafeInteger(authDate)) throw new TokenRejected("it carries no auth_date");
  const age = now / 1000 - authDate;
  const maxAge = config.settings.maxAgeSeconds ?? DEFAULT_MAX_AGE_SECONDS;
  if (age > maxAge) throw new TokenRejected(`it is older than ${maxAge} seconds (auth_date)`);
  if (age < -FUTURE_LEEWAY_SECONDS) throw new TokenRejected("its auth_date is in the future");
  const user = telegramUser(config.provider, fields);
  // Telegram shares no email address.
  return { externalUserId: user.id, email: null, emailVerified: false, name: user.name };
}
