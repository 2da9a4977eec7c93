import { badRequest } from "@/lib/errors";

/**
 * Where a browser sign-in may send the player's browser back (`redirectTo`): only to a URL the
 * project allow-listed for that mode (the google configuration's `redirectUrls`), compared by
 * scheme, host, port and path after normalisation (the game may add a query of its own). The
 * browser carries the sign-in's one-time code there, so an open redirect would hand it to anyone.
 */

export const MAX_REDIRECT_URLS = 20;
const LOOPBACK_HOSTS = /^(localhost|127(\.\d{1,3}){3}|\[::1\])$/;
// A private-use scheme of a native app names a domain its developer owns (RFC 8252 §7.1): `com.example.game:`.
const PRIVATE_USE_SCHEME = /^[a-z][a-z0-9+-]*(\.[a-z0-9+-]+)+:$/;

/** Why `raw` cannot be an allow-listed URL, or null. */
function entryProblem(raw: string, livemode: boolean): string | null {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return `${JSON.stringify(raw.slice(0, 100))} is not an absolute URL.`;
  }
  if (url.username || url.password) return `${raw} carries credentials.`;
  if (raw.includes("#") || url.search) return `${raw} has a query or fragment: list the page only.`;
  if (url.protocol === "https:") return null;
  if (url.protocol === "http:") {
    return livemode && !LOOPBACK_HOSTS.test(url.hostname) ? `${raw}: live mode takes https URLs (plain http only for localhost and loopback addresses).` : null;
  }
  return PRIVATE_USE_SCHEME.test(url.protocol) ? null : `${raw}: expected an https (or http) URL, or an app's private-use scheme such as com.example.game:/oauth.`;
}

/**
 * An allow-list as sent (URLs separated by white space or new lines, or a list of them), checked
 * and normalised to one URL a line; "" (or an empty list) clears it.
 */
export function normaliseRedirectUrls(value: string | string[], livemode: boolean): string {
  const entries = (Array.isArray(value) ? value : [value]).flatMap((v) => v.split(/\s+/)).filter(Boolean);
  const fail = (message: string) => badRequest(`Invalid parameter redirectUrls: ${message}`, { redirectUrls: { message } });
  if (entries.length > MAX_REDIRECT_URLS) throw fail(`At most ${MAX_REDIRECT_URLS} URLs.`);
  const normalised = entries.map((raw) => {
    const problem = entryProblem(raw, livemode);
    if (problem) throw fail(problem);
    return new URL(raw).href;
  });
  return [...new Set(normalised)].join("\n");
}

/** The stored allow-list as URLs. */
export const redirectUrlsOf = (stored: unknown): string[] => (typeof stored === "string" ? stored.split("\n").filter(Boolean) : []);

/** Where to send the browser: `redirectTo` if allow-listed, the first allowed URL when none is given; else a 400 naming it. */
export function allowedRedirect(allowed: string[], redirectTo: string | undefined, mode: string): string {
  const refuse = (message: string) => badRequest(`Invalid parameter redirectTo: ${message}`, { redirectTo: { ...(redirectTo !== undefined && { value: redirectTo }), message } });
  if (allowed.length === 0) {
    throw refuse(`google's configuration in ${mode} mode allows no redirectTo yet: list the pages the browser may return to in its redirectUrls (POST /iam/v1/oauth, or the dashboard's Player sign-in page).`);
  }
  if (redirectTo === undefined) return allowed[0]!;
  let url: URL;
  try {
    url = new URL(redirectTo);
  } catch {
    throw refuse("Expected an absolute URL listed in google's redirectUrls.");
  }
  if (url.username || url.password || redirectTo.includes("#")) throw refuse("Expected a URL without credentials or fragment.");
  const page = new URL(url.href);
  page.search = "";
  if (!allowed.includes(page.href)) throw refuse(`${page.href} is not in google's redirectUrls for ${mode} mode.`);
  return url.href;
}
