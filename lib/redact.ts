import { inspect } from "node:util";
import { envFamily, envRaw } from "@/lib/config";

/**
 * Log redaction. RPC and bundler URLs often carry a provider key in their path, query or
 * user-info (…/v2/<key>, ?apikey=…), and viem puts the URL in its error messages; webhook URLs
 * carry receivers' tokens; a database URL its password. Everything logged from an error goes
 * through `redact`.
 */

const MARK = "[redacted]";

// Schemes whose URLs may carry credentials; file: and webpack-internal: stack frames stay readable.
const URL_PATTERN = /\b(?:https?|wss?|postgres(?:ql)?):\/\/[^\s"'<>`\\]+/gi;
const TRAILING = /[.,;:!?)\]}]+$/;

/** scheme://host[:port], plus a mark where user-info, path, query or fragment was dropped. */
export function redactUrl(raw: string): string {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return MARK;
  }
  const dropped = url.username || url.password || url.pathname.length > 1 || url.search || url.hash;
  return `${url.protocol}//${url.host}${dropped ? `/${MARK}` : ""}`;
}

/** The configured RPC and bundler URLs (as the chain registry reads them), to catch their secret parts written without a scheme. */
function configuredUrls(): string[] {
  const urls: string[] = [];
  for (const [, value] of envFamily(/^CHAIN_\d+_(RPC|BUNDLER)_URL$/)) {
    // An RPC URL may be a comma list of nodes.
    if (value) urls.push(...value.split(",").map((v) => v.trim()).filter(Boolean));
  }
  try {
    const chains = JSON.parse(envRaw("CHAINS") ?? "[]") as { rpcUrl?: unknown; bundlerUrl?: unknown }[];
    for (const chain of Array.isArray(chains) ? chains : []) {
      for (const value of [chain?.rpcUrl, chain?.bundlerUrl]) if (typeof value === "string") urls.push(...value.split(",").map((v) => v.trim()).filter(Boolean));
    }
  } catch {
    // Invalid CHAINS is reported by the registry; nothing to collect here.
  }
  return urls;
}

/** Secret-looking parts of a configured URL: user-info, path plus query, and each long path segment or query value. */
function secretParts(raw: string): string[] {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return [];
  }
  const parts = [url.username, url.password, `${url.pathname}${url.search}`, ...url.pathname.split("/"), ...url.searchParams.values()];
  // Short parts ("/", "rpc", "v2") are not keys, and replacing them would garble messages.
  return parts.filter((p) => p.length >= 12);
}

/** The text with every URL cut to scheme://host and the secret parts of configured RPC/bundler URLs removed. */
export function redact(text: string): string {
  let out = text.replace(URL_PATTERN, (match) => {
    const trail = TRAILING.exec(match)?.[0] ?? "";
    return redactUrl(match.slice(0, match.length - trail.length)) + trail;
  });
  const secrets = configuredUrls().flatMap(secretParts).sort((a, b) => b.length - a.length);
  for (const secret of secrets) out = out.split(secret).join(MARK);
  return out;
}

/** An error as logged: stack, cause chain and properties (viem's `url`, `details`), redacted. */
export function errorText(err: unknown): string {
  return redact(err instanceof Error ? inspect(err, { depth: 4, breakLength: Infinity }) : String(err));
}
