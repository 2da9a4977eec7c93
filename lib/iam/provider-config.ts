import crypto from "node:crypto";
import { asc, eq } from "drizzle-orm";
import { z } from "zod";
import type { Queryable } from "@/lib/db/client";
import { oauthConfigs } from "@/lib/db/schema";
import { inScope } from "@/lib/db/scope";
import { badRequest, notFound, type ErrorDetails } from "@/lib/errors";
import { booleanField, integerField } from "@/lib/http/fields";
import { newId } from "@/lib/ids";
import { decrypt, encrypt } from "@/lib/keys/encryption";
import { checkOutboundUrl } from "@/lib/outbound";
import type { ProjectContext } from "@/lib/tenant";
import { parseHeaders } from "./providers/opaque";
import { MAX_REDIRECT_URLS, normaliseRedirectUrls } from "./redirect-urls";
import { CONFIGURABLE_PROVIDERS, type ProviderConfig, type ProviderName, type ProviderSecrets, type ProviderSettings } from "./providers/types";

/**
 * Provider configurations, one per provider in each project and mode. Fields use the official
 * SDK's AuthConfig names. Posting a configuration for a provider that has one updates it: fields
 * sent replace what was stored, fields left out keep it, an empty value clears an optional one.
 * Secrets are sealed together (AAD `oauth-config:<id>`) and shown only as `…` and their last four
 * characters.
 */

const text = (max = 500) => z.string().trim().max(max);
const url = () => z.string().trim().max(2000);
const secret = () => z.string().max(8192);

const FIELDS = {
  clientId: text(),
  clientSecret: secret(),
  baseUrl: url(),
  aud: text(),
  jwksUrl: url(),
  publicVerificationKey: z.string().max(8192),
  projectId: text(200),
  titleId: text(40),
  url: url(),
  key: secret(),
  jwtSecret: secret(),
  botToken: secret(),
  secretKey: secret(),
  authenticationUrl: url(),
  headers: secret(),
  maxAgeSeconds: integerField({ min: 60, max: 30 * 86_400 }),
  // URLs separated by white space or new lines, or a list of them (form-encoded `redirectUrls[]`).
  redirectUrls: z.union([z.string().max(MAX_REDIRECT_URLS * 2001), z.array(z.string().max(2000)).max(MAX_REDIRECT_URLS)]),
} as const;
type FieldName = keyof typeof FIELDS;

/** The fields each provider takes (anything else is refused as an unknown parameter). */
const PROVIDER_FIELDS: Record<ProviderName, FieldName[]> = {
  google: ["clientId", "clientSecret", "baseUrl", "redirectUrls"],
  twitter: ["clientId", "clientSecret", "baseUrl"],
  facebook: ["clientId", "clientSecret", "baseUrl"],
  discord: ["clientId", "clientSecret", "baseUrl"],
  epic_games: ["clientId", "clientSecret", "baseUrl"],
  oidc: ["aud", "clientId", "jwksUrl", "publicVerificationKey", "baseUrl"],
  custom: ["authenticationUrl", "headers", "aud", "clientId", "jwksUrl", "publicVerificationKey", "baseUrl"],
  firebase: ["projectId", "jwksUrl"],
  supabase: ["url", "key", "jwtSecret", "aud", "jwksUrl"],
  telegramMiniApp: ["botToken", "maxAgeSeconds"],
  telegram: ["botToken", "maxAgeSeconds"],
  playfab: ["titleId", "secretKey", "baseUrl"],
  lootlocker: ["baseUrl"],
};

const SECRET_FIELDS = ["clientSecret", "key", "jwtSecret", "botToken", "secretKey", "headers"] as const satisfies (keyof ProviderSecrets & FieldName)[];
const URL_FIELDS = ["baseUrl", "jwksUrl", "url", "authenticationUrl"] as const;

const providerSchema = (provider: ProviderName) =>
  z.strictObject({
    provider: z.literal(provider),
    enabled: booleanField().optional(),
    ...Object.fromEntries(PROVIDER_FIELDS[provider].map((f) => [f, FIELDS[f].optional()])),
  });

export const configInput = z.discriminatedUnion(
  "provider",
  CONFIGURABLE_PROVIDERS.map(providerSchema) as unknown as [ReturnType<typeof providerSchema>, ...ReturnType<typeof providerSchema>[]],
  { error: `Expected one of: ${CONFIGURABLE_PROVIDERS.join(", ")}` },
);
export type ConfigInput = { provider: ProviderName; enabled?: boolean } & Partial<Record<FieldName, string | number>>;

export const providerParam = z.enum(CONFIGURABLE_PROVIDERS, { error: `Expected one of: ${CONFIGURABLE_PROVIDERS.join(", ")}` });

/** What the API shows: the SDK's AuthConfig fields, secrets as a hint. */
export const configResponse = z
  .object({
    id: z.string(),
    object: z.literal("oauthConfig"),
    provider: z.enum(CONFIGURABLE_PROVIDERS),
    enabled: z.boolean(),
  })
  .catchall(z.union([z.string(), z.number()]));

type Row = typeof oauthConfigs.$inferSelect;
/** The AAD a configuration's secrets are sealed with (lib/key-rotation.ts reseals them with it). */
export const oauthConfigAad = (id: string) => `oauth-config:${id}`;
const aad = oauthConfigAad;

/** `…abcd`: enough to tell two secrets apart, too little to use (short secrets show nothing). */
export const maskSecret = (value: string) => (value.length >= 16 ? `…${value.slice(-4)}` : "…");

function secretsOf(row: Row): ProviderSecrets {
  return row.encryptedSecret ? (JSON.parse(decrypt(row.encryptedSecret, aad(row.id))) as ProviderSecrets) : {};
}

/** A row as the flat field map the API speaks (secrets in the clear: callers mask them). */
function fieldsOf(row: Row, secrets: ProviderSecrets): Partial<Record<FieldName, string | number>> {
  const settings = row.settings as ProviderSettings;
  const out: Partial<Record<FieldName, string | number>> = { ...settings, ...secrets };
  if (row.clientId !== null) out.clientId = row.clientId;
  if (row.baseUrl !== null) out[row.provider === "supabase" ? "url" : "baseUrl"] = row.baseUrl;
  return out;
}

export function presentConfig(row: Row) {
  const fields = fieldsOf(row, secretsOf(row));
  for (const name of SECRET_FIELDS) if (typeof fields[name] === "string") fields[name] = maskSecret(fields[name] as string);
  return { id: row.id, object: "oauthConfig" as const, provider: row.provider as ProviderName, enabled: row.enabled, ...fields };
}

function toConfig(row: Row): ProviderConfig {
  return {
    id: row.id,
    provider: row.provider as ProviderName,
    enabled: row.enabled,
    clientId: row.clientId,
    baseUrl: row.baseUrl,
    settings: row.settings as ProviderSettings,
    secrets: secretsOf(row),
  };
}

// The mode's configurations, narrowed to one provider when a (non-empty) name is given.
const configsIn = (ctx: ProjectContext, provider?: string) => inScope(oauthConfigs, ctx, provider ? eq(oauthConfigs.provider, provider) : undefined);

/** The mode's configuration of a provider, secrets decrypted (for verification and sign-in flows), or null. */
export async function loadProviderConfig(db: Queryable, ctx: ProjectContext, provider: string): Promise<ProviderConfig | null> {
  const [row] = await db.select().from(oauthConfigs).where(configsIn(ctx, provider));
  return row ? toConfig(row) : null;
}

export async function listConfigs(db: Queryable, ctx: ProjectContext) {
  const rows = await db.select().from(oauthConfigs).where(configsIn(ctx)).orderBy(asc(oauthConfigs.createdAt), asc(oauthConfigs.provider));
  return rows.map(presentConfig);
}

export async function getConfig(db: Queryable, ctx: ProjectContext, provider: string) {
  const [row] = await db.select().from(oauthConfigs).where(configsIn(ctx, provider));
  if (!row) throw notFound("OAuth configuration", provider);
  return presentConfig(row);
}

export async function deleteConfig(db: Queryable, ctx: ProjectContext, provider: string) {
  const [row] = await db.delete(oauthConfigs).where(configsIn(ctx, provider)).returning({ id: oauthConfigs.id });
  if (!row) throw notFound("OAuth configuration", provider);
  return { id: row.id, object: "oauthConfig" as const, deleted: true as const };
}

/** Which fields the merged configuration must have for its provider's verification to work. */
function missing(provider: ProviderName, f: Partial<Record<FieldName, string | number>>): ErrorDetails {
  const need = (name: FieldName, why: string): ErrorDetails => (f[name] === undefined ? { [name]: { message: `Required for ${provider}: ${why}.` } } : {});
  const keys = f.publicVerificationKey !== undefined || f.jwksUrl !== undefined || f.baseUrl !== undefined;
  const jwtShape = (): ErrorDetails => ({
    ...(f.aud === undefined && f.clientId === undefined ? { aud: { message: `Required for ${provider}: the audience its tokens are issued for (or clientId).` } } : {}),
    ...(keys ? {} : { jwksUrl: { message: `Required for ${provider}: jwksUrl, publicVerificationKey, or baseUrl (the issuer, for discovery).` } }),
  });
  switch (provider) {
    case "google":
      return need("clientId", "the OAuth client id its ID tokens are issued for");
    case "facebook":
      return { ...need("clientId", "the app id tokens must belong to"), ...need("clientSecret", "the app secret, to ask Facebook about a token") };
    case "discord":
    case "epic_games":
      return need("clientId", "the application tokens must belong to");
    case "oidc":
      return jwtShape();
    case "custom":
      return f.authenticationUrl !== undefined ? {} : jwtShape();
    case "firebase":
      return need("projectId", "the Firebase project");
    case "supabase":
      return need("url", "the project URL");
    case "telegramMiniApp":
    case "telegram":
      return need("botToken", "the bot's token, which keys Telegram's signature");
    case "playfab":
      return need("titleId", "the title");
    default:
      return {};
  }
}

/** Checks of single values that a schema cannot express (URLs under the outbound rule, keys, headers). */
async function checkValues(input: Partial<Record<FieldName, string | number>>, livemode: boolean) {
  for (const field of URL_FIELDS) {
    if (typeof input[field] === "string" && input[field] !== "") await checkOutboundUrl(input[field] as string, { livemode, field });
  }
  const bad = (field: FieldName, message: string) => badRequest(`Invalid parameter ${field}: ${message}`, { [field]: { message } });
  if (typeof input.publicVerificationKey === "string" && input.publicVerificationKey !== "") {
    try {
      if (crypto.createPublicKey(input.publicVerificationKey).type !== "public") throw new Error();
    } catch {
      throw bad("publicVerificationKey", "Expected a PEM-encoded public key (-----BEGIN PUBLIC KEY-----).");
    }
  }
  if (typeof input.headers === "string" && parseHeaders(input.headers) === null) {
    throw bad("headers", 'Expected a JSON object of header names to text values, or "Name: value" lines.');
  }
  if (typeof input.titleId === "string" && input.titleId !== "" && !/^[A-Za-z0-9]{1,40}$/.test(input.titleId)) throw bad("titleId", "Expected a PlayFab title id (letters and digits).");
  if (typeof input.projectId === "string" && input.projectId !== "" && !/^[a-z0-9][a-z0-9-]{0,99}$/.test(input.projectId)) {
    throw bad("projectId", "Expected a Firebase project id (lower-case letters, digits and hyphens).");
  }
}

/** An issuer is kept exactly as given (it is compared with the tokens' `iss`); API base URLs lose a trailing slash. */
function baseUrlOf(provider: ProviderName, f: Partial<Record<FieldName, string | number>>): string | null {
  const value = (provider === "supabase" ? f.url : f.baseUrl) as string | undefined;
  if (value === undefined) return null;
  return ["google", "oidc", "custom"].includes(provider) ? value : value.replace(/\/+$/, "");
}

/** Where a configuration sends requests (and with them its secrets): the base URL (`url` for supabase), the JWKS and authentication URLs. */
function destinations(provider: ProviderName, baseUrl: string | null, f: Partial<Record<FieldName, string | number>>): Partial<Record<FieldName, string>> {
  const out: Partial<Record<FieldName, string>> = {};
  if (baseUrl !== null) out[provider === "supabase" ? "url" : "baseUrl"] = baseUrl;
  for (const name of ["jwksUrl", "authenticationUrl"] as const) if (typeof f[name] === "string") out[name] = f[name] as string;
  return out;
}

/**
 * Pointing a configuration at a new address would send its stored secrets there (a client secret
 * to a token endpoint, headers to an authentication URL): whoever changes a URL must send those
 * secrets again with it, so a leaked API key alone cannot redirect them (issue 29.14).
 */
function requireSecretsForNewUrls(provider: ProviderName, current: Row, merged: Partial<Record<FieldName, string | number>>, given: Partial<Record<FieldName, string | number>>) {
  const stored = secretsOf(current);
  const before = destinations(provider, current.baseUrl, fieldsOf(current, stored));
  const after = destinations(provider, baseUrlOf(provider, merged), merged);
  const moved = (Object.keys(after) as FieldName[]).filter((name) => after[name] !== before[name]);
  if (moved.length === 0) return;
  const needed = SECRET_FIELDS.filter((name) => stored[name] !== undefined && given[name] === undefined); // "" clears it: nothing left to send
  if (needed.length === 0) return;
  const message = `Changing ${moved.join(", ")} would send the stored ${needed.join(", ")} to a new address: send ${needed.length > 1 ? "them" : "it"} again in the same request.`;
  throw badRequest(message, Object.fromEntries(needed.map((name) => [name, { message: `Required when ${moved.join(", ")} changes.` }])));
}

/** Creates or updates the mode's configuration of `input.provider`. */
export type ConfigResponse = ReturnType<typeof presentConfig>;

export async function upsertConfig(db: Queryable, ctx: ProjectContext, input: ConfigInput): Promise<ConfigResponse> {
  const { provider, enabled, ...given } = input;
  await checkValues(given, ctx.livemode);
  // Stored one URL a line, checked for this mode (https in live mode): redirect-urls.ts.
  if (given.redirectUrls !== undefined) given.redirectUrls = normaliseRedirectUrls(given.redirectUrls as string | string[], ctx.livemode);
  const result = await db.transaction(async (tx): Promise<ConfigResponse | null> => {
    const [current] = await tx.select().from(oauthConfigs).where(configsIn(ctx, provider)).for("update");
    const merged = current ? fieldsOf(current, secretsOf(current)) : {};
    for (const [name, value] of Object.entries(given) as [FieldName, string | number][]) {
      if (value === "") delete merged[name];
      else merged[name] = value;
    }
    if (current) requireSecretsForNewUrls(provider, current, merged, given);
    const absent = missing(provider, merged);
    if (Object.keys(absent).length > 0) {
      throw badRequest(`Missing required parameter${Object.keys(absent).length > 1 ? "s" : ""} for ${provider}: ${Object.keys(absent).join(", ")}.`, absent);
    }
    const id = current?.id ?? newId("oauthConfig");
    const secrets = Object.fromEntries(SECRET_FIELDS.filter((n) => merged[n] !== undefined).map((n) => [n, merged[n]]));
    const settings = Object.fromEntries(
      (["aud", "jwksUrl", "publicVerificationKey", "projectId", "titleId", "authenticationUrl", "maxAgeSeconds", "redirectUrls"] as const).filter((n) => merged[n] !== undefined).map((n) => [n, merged[n]]),
    );
    const values = {
      enabled: enabled ?? current?.enabled ?? true,
      clientId: (merged.clientId as string | undefined) ?? null,
      baseUrl: baseUrlOf(provider, merged),
      settings,
      encryptedSecret: Object.keys(secrets).length > 0 ? encrypt(JSON.stringify(secrets), aad(id)) : null,
    };
    const [row] = current
      ? await tx.update(oauthConfigs).set({ ...values, updatedAt: new Date() }).where(eq(oauthConfigs.id, id)).returning()
      : await tx.insert(oauthConfigs).values({ id, ...ctx, provider, ...values }).onConflictDoNothing().returning();
    // Two first configurations at once: the unique index kept one; this one becomes an update of it.
    return row ? presentConfig(row) : null;
  });
  return result ?? upsertConfig(db, ctx, input);
}
