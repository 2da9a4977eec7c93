import type { ProviderName } from "@/lib/iam/providers/types";

/**
 * How the Player sign-in page names the sign-in providers and their configuration fields. Which
 * fields a provider takes comes from the API's own schema (lib/iam/provider-config.ts), given to
 * the page by the server; this module only says them in words, so it is safe in the browser.
 */

export const PROVIDER_LABELS: Record<ProviderName, string> = {
  google: "Google",
  oidc: "OpenID Connect",
  custom: "Custom",
  firebase: "Firebase",
  supabase: "Supabase",
  telegramMiniApp: "Telegram Mini App",
  telegram: "Telegram Login Widget",
  playfab: "PlayFab",
  lootlocker: "LootLocker",
  twitter: "Twitter / X",
  facebook: "Facebook",
  discord: "Discord",
  epic_games: "Epic Games",
};

export const PROVIDER_HINTS: Record<ProviderName, string> = {
  google: "Google ID tokens, checked against Google's keys; or the browser sign-in flow (signin_url).",
  oidc: "ID tokens of any OpenID provider, checked against its keys, issuer and audience.",
  custom: "Your own tokens: a JWT checked like OpenID Connect, or any token your authentication URL vouches for.",
  firebase: "Firebase Authentication ID tokens.",
  supabase: "Supabase Auth access tokens.",
  telegramMiniApp: "Telegram.WebApp.initData, checked with the HMAC Telegram derives from your bot's token.",
  telegram: "The Login Widget's fields, checked with the hash Telegram derives from your bot's token.",
  playfab: "PlayFab session tickets, checked by asking PlayFab.",
  lootlocker: "LootLocker session tokens, checked by asking LootLocker.",
  twitter: "OAuth 2.0 user access tokens, checked by asking Twitter.",
  facebook: "User access tokens, checked with Facebook's debug_token for your app.",
  discord: "OAuth2 access tokens, checked by asking Discord for your application.",
  epic_games: "Epic Account Services tokens, checked with Epic's tokenInfo.",
};

/** Fields whose value is never shown again: the page shows their hint, and an empty field keeps them. */
export const SECRET_FIELDS = new Set(["clientSecret", "key", "jwtSecret", "botToken", "secretKey", "headers"]);
/** Fields that hold a whole number (an empty one is left as it is: the API has no "unset" for them). */
export const NUMBER_FIELDS = new Set(["maxAgeSeconds"]);
/** Fields typed as several lines. */
export const MULTILINE_FIELDS = new Set(["publicVerificationKey", "headers", "redirectUrls"]);

const FIELD_LABELS: Record<string, string> = {
  clientId: "Client id",
  clientSecret: "Client secret",
  baseUrl: "Base URL",
  aud: "Audience (aud)",
  jwksUrl: "JWKS URL",
  publicVerificationKey: "Public verification key (PEM)",
  projectId: "Firebase project id",
  titleId: "Title id",
  url: "Project URL",
  key: "Anon key",
  jwtSecret: "JWT secret",
  botToken: "Bot token",
  secretKey: "Title secret key",
  authenticationUrl: "Authentication URL",
  headers: "Headers for the authentication URL",
  maxAgeSeconds: "Maximum age (seconds)",
  redirectUrls: "Allowed redirect URLs",
};

const FIELD_HINTS: Record<string, string> = {
  clientId: "The OAuth client (app) id tokens must be issued for.",
  clientSecret: "Kept encrypted; shown afterwards only as its last four characters.",
  baseUrl: "The provider's API base, when not its public one (a proxy or a test server).",
  aud: "The audience tokens must name (else the client id).",
  jwksUrl: "Where the issuer publishes its public keys.",
  publicVerificationKey: "-----BEGIN PUBLIC KEY-----, instead of a JWKS URL.",
  url: "https://<project>.supabase.co",
  key: "Kept encrypted.",
  jwtSecret: "Only for projects that still sign HS256 tokens; else the project's JWKS is used.",
  botToken: "From @BotFather; kept encrypted, shown afterwards only as its last four characters.",
  secretKey: "Optional: without it tickets are checked with the player's own ticket.",
  authenticationUrl: 'Receives {"payload": token} and answers {"userId", "email"?}.',
  headers: 'A JSON object or "Name: value" lines (often an API key); kept encrypted.',
  maxAgeSeconds: "How old sign-in data may be: 60 to 2,592,000 (default 86,400, a day).",
};

const PROVIDER_FIELD_HINTS: Partial<Record<`${ProviderName}.${string}`, string>> = {
  "google.clientId": "Your OAuth client id: the audience of Google's ID tokens.",
  "google.baseUrl": "The issuer, when not https://accounts.google.com (a test provider).",
  "google.redirectUrls": "One a line: the pages of your game a browser sign-in may return to (signin_url's redirectTo; the first is the default). https, or http for localhost.",
  "oidc.baseUrl": "The issuer: checked against tokens' iss, and used for discovery when no keys are given.",
  "custom.baseUrl": "The issuer: checked against tokens' iss, and used for discovery when no keys are given.",
  "firebase.jwksUrl": "Only for the emulator: Google's securetoken keys are used otherwise.",
  "supabase.aud": 'The audience tokens must name (default "authenticated").',
  "supabase.jwksUrl": "When not <project URL>/auth/v1/.well-known/jwks.json.",
  "playfab.baseUrl": "When not https://<titleId>.playfabapi.com.",
};

export function fieldLabel(field: string): string {
  return FIELD_LABELS[field] ?? field;
}

export function fieldHint(provider: ProviderName, field: string): string | undefined {
  return PROVIDER_FIELD_HINTS[`${provider}.${field}`] ?? FIELD_HINTS[field];
}

/** The fields a configuration form sends for a provider, in the API's order (those the schema lists). */
export type ProviderFields = Record<ProviderName, string[]>;
