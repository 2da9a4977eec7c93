import type http from "node:http";

type HeaderSource = Headers | Record<string, string | string[] | undefined> | undefined;

/**
 * How many proxies in front of us append to X-Forwarded-For: `TRUST_PROXY` (a number, or `true`
 * for one). Unset, none: the header the client sent is dropped on arrival (see below) and the
 * address comes from the socket.
 */
const trustedHops = () => {
  const raw = process.env.TRUST_PROXY?.trim().toLowerCase();
  if (!raw || raw === "false" || raw === "0") return 0;
  const n = Number(raw);
  return Number.isInteger(n) && n > 0 ? n : 1;
};

function headerOf(headers: HeaderSource, name: string): string | undefined {
  if (!headers) return undefined;
  if (headers instanceof Headers) return headers.get(name) ?? undefined;
  const value = headers[name];
  return Array.isArray(value) ? value.join(",") : value;
}

/**
 * The client's address, for the limits on unauthenticated routes. Next.js hands route handlers
 * the socket's address as X-Forwarded-For when the request has none; each trusted proxy appends
 * the address it saw, so the entry that many places from the right is the one no client can forge.
 */
export function clientAddress(headers: HeaderSource): string {
  const entries = (headerOf(headers, "x-forwarded-for") ?? "")
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean);
  const hops = Math.max(1, trustedHops());
  return entries[Math.max(0, entries.length - hops)] ?? "unknown";
}

/**
 * Without a trusted proxy, drops the X-Forwarded-For a client sent, before Next.js sees the
 * request, so Next.js fills it with the socket's address and a client cannot pick its own bucket.
 * Route handlers get no socket of their own to read it from.
 */
export function forgetUntrustedForwarding(req: http.IncomingMessage) {
  if (trustedHops() === 0) delete req.headers["x-forwarded-for"];
}
