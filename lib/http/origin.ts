/**
 * The origin a client reached this service on, from its Host (or a proxy's X-Forwarded-Host and
 * -Proto) header: Next.js rewrites a request's URL to the host it listens on, which a browser
 * elsewhere could not open. `fallback` (the request URL) serves when no header says.
 */
export function requestOrigin(headers: Headers, fallback: string): string;
export function requestOrigin(headers: Headers, fallback?: string): string | undefined;
export function requestOrigin(headers: Headers, fallback?: string): string | undefined {
  const host = headers.get("x-forwarded-host")?.split(",")[0]?.trim() || headers.get("host");
  const fallbackUrl = fallback ? new URL(fallback) : undefined;
  if (!host) return fallbackUrl?.origin;
  const proto = headers.get("x-forwarded-proto")?.split(",")[0]?.trim() || fallbackUrl?.protocol.replace(":", "") || "http";
  return `${proto}://${host}`;
}
