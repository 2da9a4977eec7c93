import type http from "node:http";
import ipaddr from "ipaddr.js";
import { envText } from "@/lib/config";

type HeaderSource = Headers | Record<string, string | string[] | undefined> | undefined;

/**
 * How many proxies in front of us append to X-Forwarded-For: `TRUST_PROXY` (a number, or `true`
 * for one). Unset, none: the forwarding headers the client sent are dropped on arrival (see
 * below), the address comes from the socket and the origin from the Host header.
 */
export const trustedHops = () => {
  const raw = envText("TRUST_PROXY")?.toLowerCase();
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
 * The client's IP address as sent: Next.js hands route handlers the socket's address as
 * X-Forwarded-For when the request has none; each trusted proxy appends the address it saw, so
 * the entry that many places from the right is the one no client can forge. IPv4-mapped IPv6
 * (`::ffff:198.51.100.7`, as a dual-stack socket reports IPv4 clients) is read as its IPv4.
 */
export function clientIp(headers: HeaderSource): string {
  const entries = (headerOf(headers, "x-forwarded-for") ?? "")
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean);
  const entry = entries[Math.max(0, entries.length - Math.max(1, trustedHops()))];
  if (!entry) return "unknown";
  return ipaddr.isValid(entry) ? ipaddr.process(entry).toString() : entry.slice(0, 100);
}

/**
 * The client's address as the per-address limits count it: an IPv4 address, or an IPv6 address's
 * /64. One subscriber is handed a whole /64 (2^64 addresses), so counting full IPv6 addresses
 * would give one client as many buckets as it likes.
 */
export function clientAddress(headers: HeaderSource): string {
  const ip = clientIp(headers);
  if (!ipaddr.IPv6.isValid(ip)) return ip;
  return `${ipaddr.IPv6.networkAddressFromCIDR(`${ip.split("%")[0]}/64`).toString()}/64`;
}

/** What a client may set to pick its bucket or the origin of our links; only proxies we trust may. */
const FORWARDING_HEADERS = ["x-forwarded-for", "x-forwarded-host", "x-forwarded-proto", "x-forwarded-port"];

/**
 * Without a trusted proxy, drops the X-Forwarded-* headers a client sent, before Next.js sees
 * the request: Next.js then fills them from the socket and the Host header, so a client can pick
 * neither its own rate-limit bucket nor the host of the links we hand out (a signing link carries
 * its access token). Route handlers get no socket of their own to read these from.
 */
export function forgetUntrustedForwarding(req: http.IncomingMessage) {
  if (trustedHops() === 0) for (const name of FORWARDING_HEADERS) delete req.headers[name];
}
