import qs from "qs";
import { getDb } from "@/lib/db/client";
import { unroutable } from "@/lib/http/unroutable";
import { createProject, type ProjectWithKeys } from "@/lib/projects/service";
import { OTHER_ROUTE_FILES, routeFilesOnDisk } from "@/scripts/routes";
import { rememberSecrets } from "./secrets";

type RouteModule = Record<string, (request: Request, ctx: { params: Promise<Record<string, string>> }) => Promise<Response>>;

/** A route file's URL pattern: `app/v1/players/[id]/route.ts` is `/v1/players/[id]` (a route group is not in the URL). */
const patternOf = (file: string) => file.replace(/^app/, "").replace(/\/route\.ts$/, "").replace(/\/\([^/]+\)/g, "");

/** Next.js's precedence, segment by segment: a static segment before a dynamic one, a catch-all last. */
function byPrecedence(a: string, b: string): number {
  const rank = (segment: string | undefined) => (segment === undefined ? -1 : segment.startsWith("[...") ? 2 : segment.startsWith("[") ? 1 : 0);
  const [as, bs] = [a.split("/"), b.split("/")];
  for (let i = 0; i < Math.max(as.length, bs.length); i++) {
    const diff = rank(as[i]) - rank(bs[i]);
    if (diff) return diff;
  }
  return 0;
}

/**
 * The route files, matched like Next.js matches them: the real handlers, called with real Requests. Those that
 * `npm run routes` writes from the operations (lib/endpoints.unit.test.ts keeps them in step), and the 404 catch-alls.
 */
const ROUTES: [string, () => Promise<unknown>][] = routeFilesOnDisk()
  .filter((file) => !(file in OTHER_ROUTE_FILES) || file.includes("/[..."))
  .map((file): [string, () => Promise<unknown>] => [patternOf(file), () => import(/* @vite-ignore */ `@/${file.replace(/\.ts$/, "")}`)])
  .sort(([a], [b]) => byPrecedence(a, b));

function match(pathname: string): { load: () => Promise<unknown>; params: Record<string, string> } {
  const parts = pathname.split("/").filter(Boolean);
  for (const [pattern, load] of ROUTES) {
    const segments = pattern.split("/").filter(Boolean);
    const params: Record<string, string> = {};
    let ok = true;
    for (let i = 0; i < segments.length && ok; i++) {
      const seg = segments[i]!;
      if (seg.startsWith("[...")) {
        params[seg.slice(4, -1)] = parts.slice(i).join("/");
        return { load, params };
      }
      if (parts[i] === undefined) ok = false;
      else if (seg.startsWith("[")) params[seg.slice(1, -1)] = decodeURIComponent(parts[i]!); // Next.js decodes params once
      else if (seg !== parts[i]) ok = false;
    }
    if (ok && parts.length === segments.length) return { load, params };
  }
  throw new Error(`no route for ${pathname}`);
}

export interface CallOptions {
  key?: string | null;
  /** Sent as `Authorization: Basic` instead of Bearer. */
  basic?: boolean;
  json?: unknown;
  form?: Record<string, unknown> | string;
  /** Any other body, with its content type. */
  raw?: { body: string; contentType: string };
  query?: Record<string, unknown>;
  headers?: Record<string, string>;
}

export interface ApiResponse<T = any> {
  status: number;
  body: T;
  headers: Headers;
}

export async function call<T = any>(method: string, path: string, options: CallOptions = {}): Promise<ApiResponse<T>> {
  const url = new URL(path, "http://127.0.0.1:3000");
  if (options.query) url.search = qs.stringify(options.query, { arrayFormat: "indices" });
  const headers = new Headers(options.headers);
  if (options.key) {
    headers.set("authorization", options.basic ? `Basic ${Buffer.from(`${options.key}:`).toString("base64")}` : `Bearer ${options.key}`);
  }
  let body: string | undefined;
  if (options.json !== undefined) {
    headers.set("content-type", "application/json");
    body = typeof options.json === "string" ? options.json : JSON.stringify(options.json);
  } else if (options.form !== undefined) {
    headers.set("content-type", "application/x-www-form-urlencoded");
    body = typeof options.form === "string" ? options.form : qs.stringify(options.form, { arrayFormat: "indices" });
  } else if (options.raw) {
    headers.set("content-type", options.raw.contentType);
    body = options.raw.body;
  }
  // What the server answers before Next.js routes (lib/http/unroutable.ts), answered here too.
  const refusal = unroutable(method, url.pathname);
  if (refusal) {
    const body = { error: { type: "invalid_request_error", message: refusal.message, ...(refusal.details && { details: refusal.details }) } };
    return { status: refusal.status, body: body as T, headers: new Headers(refusal.headers) };
  }
  const request = new Request(url, { method, headers, body });
  const { load, params } = match(url.pathname);
  const mod = (await load()) as RouteModule;
  const handler = mod[method];
  if (!handler) throw new Error(`${method} not exported for ${url.pathname}`);
  const response = await handler(request, { params: Promise.resolve(params) });
  const text = await response.text();
  // A page or a download (HTML, CSV) comes back as its text.
  const json = (response.headers.get("content-type") ?? "application/json").includes("json");
  const answer = text ? (json ? JSON.parse(text) : text) : null;
  rememberSecrets([options.key, options.json, options.form, answer]);
  return { status: response.status, body: answer, headers: response.headers };
}

export async function newProject(name = "test project"): Promise<ProjectWithKeys> {
  const project = await createProject(await getDb(), name);
  rememberSecrets(project.keys);
  return project;
}

/** Asserts the error envelope every failure must have, and returns it. */
export function expectError(res: ApiResponse, status: number, type?: string) {
  if (res.status !== status) throw new Error(`expected ${status}, got ${res.status}: ${JSON.stringify(res.body)}`);
  const error = res.body?.error;
  if (!error || typeof error.message !== "string" || typeof error.type !== "string") {
    throw new Error(`not an error envelope: ${JSON.stringify(res.body)}`);
  }
  if (type && error.type !== type) throw new Error(`expected error type ${type}, got ${error.type}`);
  if (JSON.stringify(res.body).includes("    at ")) throw new Error("stack trace leaked");
  return error as { type: string; message: string; details?: Record<string, { value?: unknown; message: string }> };
}

/** Polls an intent until it has a `response` (it landed), or fails after `timeoutMs`. */
export async function waitForLanding(key: string, id: string, timeoutMs = 30_000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const { body } = await call("GET", `/v1/transaction_intents/${id}`, { key });
    if (body.response) return body;
    if (Date.now() > deadline) throw new Error(`intent ${id} did not land: ${JSON.stringify(body)}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** A form as a server action receives it (FormData of text fields). */
export function formData(fields: Record<string, string>): FormData {
  const data = new FormData();
  for (const [k, v] of Object.entries(fields)) data.set(k, v);
  return data;
}
