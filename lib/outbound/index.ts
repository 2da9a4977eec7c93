import dns from "node:dns";
import http from "node:http";
import https from "node:https";
import { Readable } from "node:stream";
import { envFlag, listensOnLoopbackOnly } from "@/lib/config";
import { noteRemoteCall } from "@/lib/db/transaction-guard";
import { badRequest } from "@/lib/errors";
import { addressRefusal, ipLiteral, isLocalhostName } from "./address";

/**
 * The one way to call a URL a user set (webhooks, subscription triggers, identity providers, paymasters). Live
 * mode: https only, and every address the host resolves to must be public; the connection then goes to the checked
 * address itself. Test mode: http or https; loopback and private addresses only where the operator allows them
 * (privateTargetsAllowed), else public ones as in live mode. Cloud metadata endpoints and the unspecified address
 * never. See docs/security.md "Outbound requests".
 */

/**
 * Whether test mode may call loopback and private addresses: OUTBOUND_ALLOW_PRIVATE when set, else only while the
 * server listens on loopback alone (npm start's default), so local development against a receiver on localhost
 * works but a tenant of a reachable server cannot probe the server's network. Read at each call.
 */
export const privateTargetsAllowed = () => envFlag("OUTBOUND_ALLOW_PRIVATE") ?? listensOnLoopbackOnly();

/** Only public addresses: always in live mode, in test mode unless private targets are allowed. */
const publicOnly = (opts: OutboundOptions) => opts.livemode || !privateTargetsAllowed();

export interface ResolvedAddress {
  address: string;
  family: number;
}

/** Resolves a host name to all its addresses; injectable so tests never need real DNS. */
export type Lookup = (hostname: string) => Promise<ResolvedAddress[]>;

// Looked up on the module object at call time, so a test may also spy on dns.promises.lookup.
const systemLookup: Lookup = (hostname) => dns.promises.lookup(hostname, { all: true, verbatim: true });

export interface OutboundOptions {
  livemode: boolean;
  lookup?: Lookup;
}

/** The URL or an address it resolves to is not allowed as an outbound target. */
export class OutboundRefusedError extends Error {
  override name = "OutboundRefusedError";
}

/** The userinfo part of a raw URL (what precedes an @ in its authority), also when empty ("https://@host/"), else null. */
function rawUserinfo(raw: string): string | null {
  const authority = /^[a-z][a-z0-9+.-]*:[\\/]*([^\\/?#]*)/i.exec(raw)?.[1] ?? "";
  const at = authority.lastIndexOf("@");
  return at < 0 ? null : authority.slice(0, at);
}

function parseTarget(raw: string | URL, livemode: boolean): URL {
  // WHATWG parsing silently drops tabs and newlines (and trims spaces and controls): refuse them instead, so the URL
  // stored and shown is the one called, and no CR/LF reaches a log line or a header.
  if (typeof raw === "string" && /[\u0000-\u0020\u007f]/.test(raw)) throw new OutboundRefusedError("must not contain spaces or control characters (CR, LF, tab)");
  let url: URL;
  try {
    // WHATWG parsing also normalizes odd IPv4 forms (0x7f000001, 2130706433, 0177.0.0.1) to dotted quads.
    url = new URL(raw);
  } catch {
    throw new OutboundRefusedError("not a valid URL");
  }
  if (url.protocol !== "https:" && url.protocol !== "http:") throw new OutboundRefusedError("must be an http(s) URL");
  if (livemode && url.protocol !== "https:") throw new OutboundRefusedError("live mode requires an https URL");
  // Credentials in a URL end up wherever the URL is shown or logged; an empty userinfo ("https://@host/") is refused
  // too, as parsers disagree about where such an authority's host starts.
  if (url.username || url.password || (typeof raw === "string" && rawUserinfo(raw) !== null)) throw new OutboundRefusedError("must not contain credentials (user:password@)");
  return url;
}

function withSignal<T>(work: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (!signal) return work;
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise<T>((resolve, reject) => {
    const abort = () => reject(signal.reason);
    signal.addEventListener("abort", abort, { once: true });
    work.then(resolve, reject).finally(() => signal.removeEventListener("abort", abort));
  });
}

/**
 * Resolves the URL's host once and checks every address it has (one bad address refuses the
 * host: the OS could pick any). DNS failures throw as they are (not a refusal).
 */
const privateHint = (opts: OutboundOptions) =>
  opts.livemode ? "" : " (test mode calls private addresses only while this server listens on loopback alone, or with OUTBOUND_ALLOW_PRIVATE=true)";

async function resolveChecked(url: URL, opts: OutboundOptions, signal?: AbortSignal): Promise<ResolvedAddress> {
  const literal = ipLiteral(url.hostname);
  let addresses: ResolvedAddress[];
  if (literal) {
    addresses = [{ address: literal, family: literal.includes(":") ? 6 : 4 }];
  } else {
    if (publicOnly(opts) && isLocalhostName(url.hostname)) throw new OutboundRefusedError(`${url.hostname} is a loopback name${privateHint(opts)}`);
    addresses = await withSignal((opts.lookup ?? systemLookup)(url.hostname), signal);
    if (addresses.length === 0) throw new Error(`${url.hostname} has no address`);
  }
  for (const { address } of addresses) {
    const kind = addressRefusal(address, publicOnly(opts));
    // Refused only because private targets are off here: say so, for the developer whose local receiver stopped working.
    const hint = addressRefusal(address, false) ? "" : privateHint(opts);
    if (kind) throw new OutboundRefusedError(`${literal ? `${address} is ${kind}` : `${url.hostname} resolves to ${address}, ${kind}`}${hint}`);
  }
  return addresses[0]!;
}

/**
 * Validates a user-set URL when it is saved: throws a 400 naming `field`; answers it normalised (store its href).
 * Where only public addresses are allowed the host is resolved now too; otherwise (test mode with private targets
 * allowed) only IP literals are checked here, names after resolving at each call.
 */
export async function checkOutboundUrl(raw: string, opts: OutboundOptions & { field?: string }): Promise<URL> {
  const field = opts.field ?? "url";
  try {
    const url = parseTarget(raw, opts.livemode);
    if (publicOnly(opts) || ipLiteral(url.hostname)) await resolveChecked(url, opts);
    return url;
  } catch (err) {
    const message = err instanceof OutboundRefusedError ? err.message : `its host does not resolve (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`;
    throw badRequest(`Invalid parameter ${field}: ${message}.`, { [field]: { value: raw, message } });
  }
}

export interface OutboundInit {
  method?: string;
  headers?: Record<string, string>;
  body?: string;
  signal?: AbortSignal;
}

const NULL_BODY_STATUSES = new Set([101, 204, 205, 304]);

/**
 * fetch() for user-set URLs: checks the URL and every resolved address, then connects to the
 * checked address (never resolving again, which could answer differently: DNS rebinding).
 * Redirects are not followed: a 3xx is answered as it is. Throws OutboundRefusedError when refused,
 * `signal.reason` when aborted.
 */
export async function outboundFetch(raw: string | URL, init: OutboundInit, opts: OutboundOptions): Promise<Response> {
  noteRemoteCall("outbound request"); // never inside a transaction: lib/db/transaction-guard.ts
  const url = parseTarget(raw, opts.livemode);
  const { address } = await resolveChecked(url, opts, init.signal);
  const secure = url.protocol === "https:";
  const method = (init.method ?? "GET").toUpperCase();
  const incoming = await new Promise<http.IncomingMessage>((resolve, reject) => {
    const request = (secure ? https : http).request(
      {
        host: address,
        port: url.port || (secure ? 443 : 80),
        path: `${url.pathname}${url.search}`,
        method,
        headers: { ...init.headers, host: url.host },
        // SNI and the certificate check use the URL's name, not the address we connect to.
        servername: secure && !ipLiteral(url.hostname) ? url.hostname : undefined,
        agent: false,
        signal: init.signal,
      },
      resolve,
    );
    request.on("error", (err) => reject(init.signal?.aborted ? init.signal.reason : err));
    request.end(init.body);
  });
  const status = incoming.statusCode ?? 0;
  if (status < 200 || status > 599) {
    incoming.destroy();
    throw new Error(`answered with status ${status}`);
  }
  const headers = new Headers();
  for (const [name, value] of Object.entries(incoming.headers)) {
    for (const one of Array.isArray(value) ? value : value === undefined ? [] : [value]) headers.append(name, one);
  }
  // An abort while the body is read ends it with the signal's reason (as fetch does), not a bare "aborted" reset:
  // callers (viem's timeout among them) tell their timeout from a broken connection by it.
  const signal = init.signal;
  if (signal) {
    const abort = () => incoming.destroy(signal.reason);
    signal.addEventListener("abort", abort, { once: true });
    incoming.once("close", () => signal.removeEventListener("abort", abort));
    if (signal.aborted) abort();
  }
  const nullBody = NULL_BODY_STATUSES.has(status) || method === "HEAD";
  if (nullBody) incoming.resume();
  return new Response(nullBody ? null : (Readable.toWeb(incoming) as ReadableStream<Uint8Array>), { status, statusText: incoming.statusMessage, headers });
}
