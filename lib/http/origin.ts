import { trustedHops } from "./client-address";

/**
 * The origin a client reached this service on, from its Host header (or, behind a proxy we trust
 * by TRUST_PROXY, its X-Forwarded-Host and -Proto): Next.js rewrites a request's URL to the host it
 * listens on, which a browser elsewhere could not open. `fallback` (the request URL) serves when no
 * header says. A client's own X-Forwarded-Host is never believed: links we hand out (a signing
 * link carries its access token) would point wherever it liked.
 */
export function requestOrigin(headers: Headers, fallback: string): string;
export function requestOrigin(headers: Headers, fallback?: string): string | undefined;
export function requestOrigin(headers: Headers, fallback?: string): string | undefined {
  const forwarded = (name: string) => (trustedHops() > 0 ? headers.get(name)?.split(",")[0]?.trim() : undefined);
  const host = forwarded("x-forwarded-host") || headers.get("host");
  const fallbackUrl = fallback ? new URL(fallback) : undefined;
  if (!host) return fallbackUrl?.origin;
  const proto = forwarded("x-forwarded-proto") || fallbackUrl?.protocol.replace(":", "") || "http";
  return `${proto}://${host}`;
}
