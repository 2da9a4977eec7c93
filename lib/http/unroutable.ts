import type http from "node:http";

/** The methods Next.js builds a fetch Request for; any other (TRACE, TRACK, PROPFIND…) fails inside Next.js with an empty 400 or a 500. */
const ROUTED_METHODS = new Set(["GET", "HEAD", "OPTIONS", "POST", "PUT", "PATCH", "DELETE"]);
const ALLOW = "GET, HEAD, OPTIONS, POST, PUT, DELETE";
/** Paths whose clients expect the API's JSON errors (pages keep Next.js's own 404 page). */
const API_PREFIXES = ["/v1/", "/iam/", "/sign/", "/api/", "/rpc/"];

export interface Refusal {
  status: number;
  message: string;
  headers?: Record<string, string>;
  details?: Record<string, { value: string; message: string }>;
  /** Answered as a small HTML page (a browser's address, not the API's). */
  page?: boolean;
}

const badSegment = (segment: string): Refusal => {
  const shown = segment.length > 100 ? `${segment.slice(0, 100)}…` : segment;
  const message = "Not valid percent-encoded UTF-8.";
  return { status: 400, message: `Invalid path segment '${shown}': ${message}`, details: { path: { value: shown, message } } };
};

/**
 * Why Next.js could not route this request, if it could not: an unknown method, the request
 * target `*` (OPTIONS * asks what the server allows: a 204 says), or a path segment that does not
 * percent-decode (`%ZZ`, `%C0%AF`, `%ED%A0%80`): Next.js decodes route parameters itself and
 * answers each of these with a 500. The API answers its JSON error, pages a 400 page.
 */
export function unroutable(method: string | undefined, url: string | undefined): Refusal | null {
  if (!method || !ROUTED_METHODS.has(method)) {
    return { status: 405, message: `${String(method).slice(0, 20)} is not allowed. Allowed: ${ALLOW}.`, headers: { allow: ALLOW } };
  }
  let path = (url ?? "/").split("?")[0]!.split("#")[0]!;
  if (!path.startsWith("/")) path = path.replace(/^[a-z][a-z0-9+.-]*:\/\/[^/]*/i, "") || "/"; // absolute-form request target
  if (!path.startsWith("/")) {
    // Asterisk-form (or anything else that is no path): only OPTIONS * means something, the server as a whole.
    if (method === "OPTIONS" && path === "*") return { status: 204, message: "", headers: { allow: ALLOW } };
    const shown = path.slice(0, 100);
    return { status: 400, message: `Invalid request target '${shown}': send a path (/v1/...).`, details: { target: { value: shown, message: "not a path" } } };
  }
  const page = !API_PREFIXES.some((prefix) => path.startsWith(prefix));
  for (const segment of path.split("/")) {
    try {
      decodeURIComponent(segment);
    } catch {
      return { ...badSegment(segment), page };
    }
  }
  return null;
}

const escapeHtml = (text: string) => text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

/** The 400 page a browser shows for an address that does not decode. */
const badAddressPage = (message: string) =>
  `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Bad request</title></head>` +
  `<body style="font-family:system-ui,sans-serif;margin:4rem auto;max-width:36rem"><h1>Bad request</h1>` +
  `<p>This is not a valid address: ${escapeHtml(message)}</p><p><a href="/">Go to the start page</a></p></body></html>`;

function refuse(req: http.IncomingMessage, res: http.ServerResponse, refusal: Refusal) {
  req.resume(); // a body, if any, is drained unread
  if (refusal.status === 204) return void res.writeHead(204, refusal.headers).end();
  const [type, body] = refusal.page
    ? ["text/html; charset=utf-8", badAddressPage(refusal.message)]
    : ["application/json; charset=utf-8", JSON.stringify({ error: { type: "invalid_request_error", message: refusal.message, ...(refusal.details && { details: refusal.details }) } })];
  res.writeHead(refusal.status, { "content-type": type, "cache-control": "no-store", "content-length": Buffer.byteLength(body), ...refusal.headers });
  res.end(body);
}

/** Answers a request Next.js cannot route with the API's JSON error envelope; whether it did. */
export function refuseUnroutable(req: http.IncomingMessage, res: http.ServerResponse): boolean {
  const refusal = unroutable(req.method, req.url);
  if (refusal) refuse(req, res, refusal);
  return refusal !== null;
}
