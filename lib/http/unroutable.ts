import type http from "node:http";

/** The methods Next.js builds a fetch Request for; any other (TRACE, TRACK, PROPFIND…) fails inside Next.js with an empty 400 or a 500. */
const ROUTED_METHODS = new Set(["GET", "HEAD", "OPTIONS", "POST", "PUT", "PATCH", "DELETE"]);
const ALLOW = "GET, HEAD, OPTIONS, POST, PUT, DELETE";
/** Paths whose clients expect the API's JSON errors (pages keep Next.js's own 404 page). */
const API_PREFIXES = ["/v1/", "/iam/", "/sign/", "/api/"];

export interface Refusal {
  status: number;
  message: string;
  headers?: Record<string, string>;
  details?: Record<string, { value: string; message: string }>;
}

/**
 * Why Next.js could not route this request, if it could not: an unknown method, or (on the API)
 * a path segment that does not percent-decode (`%ZZ`, `%C0%AF`, `%ED%A0%80`): Next.js decodes
 * route parameters itself and answers a failure with a 500.
 */
export function unroutable(method: string | undefined, url: string | undefined): Refusal | null {
  if (!method || !ROUTED_METHODS.has(method)) {
    return { status: 405, message: `${String(method).slice(0, 20)} is not allowed. Allowed: ${ALLOW}.`, headers: { allow: ALLOW } };
  }
  let path = (url ?? "/").split("?")[0]!.split("#")[0]!;
  if (!path.startsWith("/")) path = path.replace(/^[a-z][a-z0-9+.-]*:\/\/[^/]*/i, ""); // absolute-form request target
  if (!API_PREFIXES.some((prefix) => path.startsWith(prefix))) return null;
  for (const segment of path.split("/")) {
    try {
      decodeURIComponent(segment);
    } catch {
      const shown = segment.length > 100 ? `${segment.slice(0, 100)}…` : segment;
      const message = "Not valid percent-encoded UTF-8.";
      return { status: 400, message: `Invalid path segment '${shown}': ${message}`, details: { path: { value: shown, message } } };
    }
  }
  return null;
}

function refuse(req: http.IncomingMessage, res: http.ServerResponse, refusal: Refusal) {
  const body = JSON.stringify({ error: { type: "invalid_request_error", message: refusal.message, ...(refusal.details && { details: refusal.details }) } });
  res.writeHead(refusal.status, { "content-type": "application/json; charset=utf-8", "cache-control": "no-store", "content-length": Buffer.byteLength(body), ...refusal.headers });
  res.end(body);
  req.resume(); // a body, if any, is drained unread
}

/** Answers a request Next.js cannot route with the API's JSON error envelope; whether it did. */
export function refuseUnroutable(req: http.IncomingMessage, res: http.ServerResponse): boolean {
  const refusal = unroutable(req.method, req.url);
  if (refusal) refuse(req, res, refusal);
  return refusal !== null;
}
