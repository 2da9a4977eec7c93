import { sql } from "drizzle-orm";
import { z } from "zod";
import type { Queryable } from "@/lib/db/client";
import { siweSettings } from "@/lib/db/schema";
import { inScope } from "@/lib/db/scope";
import { unauthorized } from "@/lib/errors";
import { documentedAs } from "@/lib/http/fields";
import type { ProjectContext } from "@/lib/tenant";
import { envText } from "@/lib/config";

/**
 * Where Sign-In with Ethereum messages may come from, per project and mode. A wallet shows the
 * user the message's `domain` and binds it to the site asking (EIP-4361), so a signature a
 * phishing site collected names that site: only the game's own domains may sign players in here.
 *
 * - `domains`: `host` (on any port), `host:port` (that port only) or `*.host` (its subdomains,
 *   not the host itself). Empty: the mode's defaults, loopback hosts and PUBLIC_URL's host in
 *   test mode (so local development works unconfigured), nothing in live mode.
 * - `uris`: origins or prefixes the message's `uri` must start with (at a `/`, `?` or `#`).
 *   Empty: an http(s) URI whose host is an allowed domain.
 */

export const MAX_SIWE_ENTRIES = 100;
const LABEL = "[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?";
const DOMAIN_ENTRY = new RegExp(`^(\\*\\.${LABEL}\\.|)(${LABEL}\\.)*${LABEL}(:[0-9]{1,5})?$`);
/** Loopback hosts allowed in test mode while the project has configured no domains (EIP-4361 domains cannot carry an IPv6 address). */
const TEST_MODE_LOOPBACK = ["localhost", "127.0.0.1"];
/** How far ahead of our clock a message's issuedAt may be (wallets' clocks drift). */
const ISSUED_AT_SKEW_MS = 5 * 60_000;

function splitHostPort(authority: string): { host: string; port?: string } {
  const colon = authority.lastIndexOf(":");
  return colon < 0 ? { host: authority.toLowerCase() } : { host: authority.slice(0, colon).toLowerCase(), port: authority.slice(colon + 1) };
}

/** An empty text clears the list (how a form sends "none"); one text is a list of one. */
function listOf(item: z.ZodType<string>) {
  const schema = z.preprocess((v) => (v === "" ? [] : typeof v === "string" ? [v] : v), z.array(item).max(MAX_SIWE_ENTRIES, `At most ${MAX_SIWE_ENTRIES} entries`));
  documentedAs.set(schema, { type: "array", items: { type: "string" }, maxItems: MAX_SIWE_ENTRIES });
  return schema;
}

export const domainEntry = z
  .string()
  .trim()
  .toLowerCase()
  .max(260)
  .refine((v) => DOMAIN_ENTRY.test(v) && Number(splitHostPort(v).port ?? 1) >= 1 && Number(splitHostPort(v).port ?? 1) <= 65535, {
    message: "Expected a host, host:port or *.host, without scheme or path (e.g. game.example, localhost:3000, *.preview.game.example)",
  });

export const uriEntry = z
  .string()
  .trim()
  .max(2000)
  .transform((v, ctx) => {
    let url: URL;
    try {
      url = new URL(v);
    } catch {
      ctx.addIssue({ code: "custom", message: "Expected an absolute URI (e.g. https://game.example or https://game.example/login)" });
      return z.NEVER;
    }
    if (url.username || url.password || url.hash) {
      ctx.addIssue({ code: "custom", message: "Expected a URI without user info or fragment" });
      return z.NEVER;
    }
    return url.href;
  });

export const settingsInput = z.strictObject({
  domains: listOf(domainEntry).optional().describe("EIP-4361 domains allowed: host, host:port or *.host. Empty: the mode's defaults."),
  uris: listOf(uriEntry).optional().describe("URIs (origins or prefixes) a message's uri must start with. Empty: an http(s) URI on an allowed domain."),
});

export const settingsResponse = z.object({
  object: z.literal("siweSettings"),
  livemode: z.boolean(),
  domains: z.array(z.string()),
  uris: z.array(z.string()),
  /** What is checked now: `domains`, or the mode's defaults while it is empty. */
  allowedDomains: z.array(z.string()),
  updatedAt: z.number().int().nullable(),
});
export type SiweSettings = z.infer<typeof settingsResponse>;

/** Test mode's domains while none is configured: loopback, and the host this service is reached on (PUBLIC_URL). */
export function defaultDomains(livemode: boolean): string[] {
  if (livemode) return [];
  const domains = [...TEST_MODE_LOOPBACK];
  try {
    const publicUrl = envText("PUBLIC_URL");
    if (publicUrl) domains.push(new URL(publicUrl).host.toLowerCase());
  } catch {
    // An unusable PUBLIC_URL adds nothing.
  }
  return [...new Set(domains)];
}

export async function getSiweSettings(db: Queryable, ctx: ProjectContext): Promise<SiweSettings> {
  const [row] = await db.select().from(siweSettings).where(inScope(siweSettings, ctx));
  return present(ctx, row);
}

/** Fields sent replace what was stored; fields left out keep it. */
export async function updateSiweSettings(db: Queryable, ctx: ProjectContext, input: z.infer<typeof settingsInput>): Promise<SiweSettings> {
  const given = { ...(input.domains && { domains: [...new Set(input.domains)] }), ...(input.uris && { uris: [...new Set(input.uris)] }) };
  const [row] = await db
    .insert(siweSettings)
    .values({ ...ctx, domains: [], uris: [], ...given })
    .onConflictDoUpdate({ target: [siweSettings.projectId, siweSettings.livemode], set: { ...given, updatedAt: sql`now()` } })
    .returning();
  return present(ctx, row);
}

function present(ctx: ProjectContext, row: typeof siweSettings.$inferSelect | undefined): SiweSettings {
  const domains = row?.domains ?? [];
  return {
    object: "siweSettings",
    livemode: ctx.livemode,
    domains,
    uris: row?.uris ?? [],
    allowedDomains: domains.length > 0 ? domains : defaultDomains(ctx.livemode),
    updatedAt: row ? Math.floor(row.updatedAt.getTime() / 1000) : null,
  };
}

function domainMatches(entry: string, domain: string): boolean {
  const allowed = splitHostPort(entry);
  const given = splitHostPort(domain);
  if (allowed.port !== undefined && allowed.port !== given.port) return false;
  return allowed.host.startsWith("*.") ? given.host.endsWith(allowed.host.slice(1)) && given.host.length > allowed.host.length - 1 : given.host === allowed.host;
}

function uriMatches(entry: string, uri: string): boolean {
  if (uri === entry) return true;
  if (!uri.startsWith(entry)) return false;
  return entry.endsWith("/") || ["/", "?", "#"].includes(uri[entry.length]!);
}

const HOW_TO_CONFIGURE = "Set the allowed domains with POST /iam/v1/siwe/settings (secret key) or on the dashboard's Player sign-in page.";
const mismatch = (field: string, value: unknown, message: string, detail: string) => unauthorized(message, { [field]: { value, message: detail } });

/** Refuses (401, naming the field, its value and what is allowed) a message whose domain or URI this project and mode do not allow. */
export async function checkSiweOrigin(db: Queryable, ctx: ProjectContext, message: { domain: string; uri: string }) {
  const settings = await getSiweSettings(db, ctx);
  const mode = ctx.livemode ? "live" : "test";
  const domains = settings.allowedDomains;
  if (domains.length === 0) {
    throw mismatch("domain", message.domain, `Sign-In with Ethereum has no allowed domains in ${mode} mode yet, so the message's domain '${message.domain}' is refused. ${HOW_TO_CONFIGURE}`, "no domain is allowed yet");
  }
  if (!domains.some((d) => domainMatches(d, message.domain))) {
    throw mismatch(
      "domain",
      message.domain,
      `The message's domain '${message.domain}' is not allowed for Sign-In with Ethereum in ${mode} mode (allowed: ${domains.join(", ")}). ${HOW_TO_CONFIGURE}`,
      `not an allowed domain (${domains.join(", ")})`,
    );
  }
  let url: URL | null = null;
  try {
    url = new URL(message.uri);
  } catch {
    // Refused below, as any other URI that is not allowed.
  }
  if (settings.uris.length > 0) {
    if (!url || !settings.uris.some((u) => uriMatches(u, url.href))) {
      throw mismatch(
        "uri",
        message.uri,
        `The message's URI '${message.uri}' is not allowed for Sign-In with Ethereum in ${mode} mode (allowed: URIs starting with ${settings.uris.join(", ")}).`,
        `not an allowed URI (${settings.uris.join(", ")})`,
      );
    }
  } else if (!url || !["http:", "https:"].includes(url.protocol) || url.username || url.password || !domains.some((d) => domainMatches(d, url.host))) {
    throw mismatch(
      "uri",
      message.uri,
      `The message's URI '${message.uri}' is not allowed for Sign-In with Ethereum in ${mode} mode: expected an http(s) URI on an allowed domain (${domains.join(", ")}), or configure the allowed URIs with POST /iam/v1/siwe/settings.`,
      `not an http(s) URI on an allowed domain (${domains.join(", ")})`,
    );
  }
}

/** Refuses a message issued in the future (beyond clock drift); expirationTime and notBefore are viem's validateSiweMessage's. */
export function checkIssuedAt(issuedAt: Date | undefined, now = Date.now()) {
  if (!issuedAt || Number.isNaN(issuedAt.getTime())) throw mismatch("issuedAt", undefined, "The message's issuedAt is missing or not an RFC 3339 date-time.", "not an RFC 3339 date-time");
  if (issuedAt.getTime() > now + ISSUED_AT_SKEW_MS) {
    throw mismatch("issuedAt", issuedAt.toISOString(), `The message's issuedAt (${issuedAt.toISOString()}) is in the future.`, "in the future");
  }
}
