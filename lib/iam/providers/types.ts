/**
 * What every provider's verification shares: the configuration it reads (secrets already
 * decrypted, in memory only for the call), the identity it proves, and how it fails.
 */

/** Providers whose tokens are JWTs checked against the issuer's keys (lib/iam/providers/oidc.ts). */
export const OIDC_PROVIDERS = ["google", "oidc", "custom", "firebase", "supabase"] as const;
/** Providers whose sign-in data is authenticated with an HMAC keyed by the bot token (telegram.ts). */
export const TELEGRAM_PROVIDERS = ["telegramMiniApp", "telegram"] as const;
/** Providers whose tokens are opaque and checked by calling the provider (opaque.ts). */
export const OPAQUE_PROVIDERS = ["playfab", "lootlocker", "twitter", "facebook", "discord", "epic_games"] as const;

export const CONFIGURABLE_PROVIDERS = [...OIDC_PROVIDERS, ...TELEGRAM_PROVIDERS, ...OPAQUE_PROVIDERS] as const;
export type ProviderName = (typeof CONFIGURABLE_PROVIDERS)[number];

export const isProviderName = (name: string): name is ProviderName => (CONFIGURABLE_PROVIDERS as readonly string[]).includes(name);

/** The secret fields a configuration may hold; kept sealed together in one column. */
export interface ProviderSecrets {
  clientSecret?: string;
  /** Supabase's project (anon) key. */
  key?: string;
  /** Supabase's JWT secret, for projects that still sign HS256. */
  jwtSecret?: string;
  botToken?: string;
  /** PlayFab's title secret key. */
  secretKey?: string;
  /** Custom provider: headers sent to its authentication URL (often an API key). */
  headers?: string;
}

/** A stored configuration, secrets decrypted. */
export interface ProviderConfig {
  id: string;
  provider: ProviderName;
  enabled: boolean;
  clientId: string | null;
  /** The issuer (OIDC family), or the API's base URL (opaque-token providers, Supabase's project URL). */
  baseUrl: string | null;
  settings: ProviderSettings;
  secrets: ProviderSecrets;
}

/** Settings that are not secret. */
export interface ProviderSettings {
  aud?: string;
  jwksUrl?: string;
  publicVerificationKey?: string;
  projectId?: string;
  titleId?: string;
  authenticationUrl?: string;
  /** Telegram: how old (seconds) sign-in data may be. */
  maxAgeSeconds?: number;
}

/** Who the provider says the token belongs to. */
export interface VerifiedIdentity {
  /** The provider's stable user id (OIDC `sub`, Telegram user id, PlayFab id, …). */
  externalUserId: string;
  email: string | null;
  /** True only when the provider itself asserts the email was verified. */
  emailVerified: boolean;
  name: string | null;
}

export interface VerifyOptions {
  livemode: boolean;
}

/** The token is not valid for this configuration (answered 401). The message may be shown to the caller. */
export class TokenRejected extends Error {
  override name = "TokenRejected";
}

/** The provider could not be asked (unreachable, refused by the outbound rule, an unreadable answer): 502. */
export class ProviderUnavailable extends Error {
  override name = "ProviderUnavailable";
}
