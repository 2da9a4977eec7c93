import qs from "qs";
import { getDb } from "@/lib/db/client";
import { unroutable } from "@/lib/http/unroutable";
import { createProject, type ProjectWithKeys } from "@/lib/projects/service";
import { rememberSecrets } from "./secrets";

type RouteModule = Record<string, (request: Request, ctx: { params: Promise<Record<string, string>> }) => Promise<Response>>;

/** The route files, matched like Next.js matches them: the real handlers, called with real Requests. */
const ROUTES: [string, () => Promise<unknown>][] = [
  ["/v1/players", () => import("@/app/v1/players/route")],
  ["/v1/players/[id]", () => import("@/app/v1/players/[id]/route")],
  ["/v1/players/[id]/request_transfer_ownership", () => import("@/app/v1/players/[id]/request_transfer_ownership/route")],
  ["/v1/players/[id]/cancel_transfer_ownership", () => import("@/app/v1/players/[id]/cancel_transfer_ownership/route")],
  ["/v1/players/[id]/inventory/native", () => import("@/app/v1/players/[id]/inventory/native/route")],
  ["/v1/players/[id]/inventory/cryptocurrency", () => import("@/app/v1/players/[id]/inventory/cryptocurrency/route")],
  ["/v1/players/[id]/inventory/nft", () => import("@/app/v1/players/[id]/inventory/nft/route")],
  ["/v1/contracts", () => import("@/app/v1/contracts/route")],
  ["/v1/contracts/[id]", () => import("@/app/v1/contracts/[id]/route")],
  ["/v1/contracts/[id]/read", () => import("@/app/v1/contracts/[id]/read/route")],
  ["/v1/accounts", () => import("@/app/v1/accounts/route")],
  ["/v1/accounts/[id]", () => import("@/app/v1/accounts/[id]/route")],
  ["/v1/accounts/[id]/deploy", () => import("@/app/v1/accounts/[id]/deploy/route")],
  ["/v1/accounts/[id]/sync", () => import("@/app/v1/accounts/[id]/sync/route")],
  ["/v1/accounts/[id]/sign_payload", () => import("@/app/v1/accounts/[id]/sign_payload/route")],
  ["/v1/accounts/[id]/request_transfer_ownership", () => import("@/app/v1/accounts/[id]/request_transfer_ownership/route")],
  ["/v1/accounts/[id]/cancel_transfer_ownership", () => import("@/app/v1/accounts/[id]/cancel_transfer_ownership/route")],
  ["/v1/accounts/[id]/start_recovery", () => import("@/app/v1/accounts/[id]/start_recovery/route")],
  ["/v1/accounts/[id]/complete_recovery", () => import("@/app/v1/accounts/[id]/complete_recovery/route")],
  ["/v1/accounts/[id]/inventory/native", () => import("@/app/v1/accounts/[id]/inventory/native/route")],
  ["/v1/accounts/[id]/inventory/cryptocurrency", () => import("@/app/v1/accounts/[id]/inventory/cryptocurrency/route")],
  ["/v1/accounts/[id]/inventory/nft", () => import("@/app/v1/accounts/[id]/inventory/nft/route")],
  ["/v1/policies", () => import("@/app/v1/policies/route")],
  ["/v1/policies/[id]", () => import("@/app/v1/policies/[id]/route")],
  ["/v1/policies/[id]/enable", () => import("@/app/v1/policies/[id]/enable/route")],
  ["/v1/policies/[id]/disable", () => import("@/app/v1/policies/[id]/disable/route")],
  ["/v1/policies/[id]/reports", () => import("@/app/v1/policies/[id]/reports/route")],
  ["/v1/policies/[id]/reports/transaction_intents", () => import("@/app/v1/policies/[id]/reports/transaction_intents/route")],
  ["/v1/policies/[id]/withdraw", () => import("@/app/v1/policies/[id]/withdraw/route")],
  ["/v1/policies/[id]/evaluate", () => import("@/app/v1/policies/[id]/evaluate/route")],
  ["/v1/policy_rules", () => import("@/app/v1/policy_rules/route")],
  ["/v1/policy_rules/[id]", () => import("@/app/v1/policy_rules/[id]/route")],
  ["/v1/transaction_intents", () => import("@/app/v1/transaction_intents/route")],
  ["/v1/transaction_intents/[id]", () => import("@/app/v1/transaction_intents/[id]/route")],
  ["/v1/transaction_intents/[id]/signature", () => import("@/app/v1/transaction_intents/[id]/signature/route")],
  ["/v1/sessions", () => import("@/app/v1/sessions/route")],
  ["/v1/sessions/revoke", () => import("@/app/v1/sessions/revoke/route")],
  ["/v1/sessions/[id]", () => import("@/app/v1/sessions/[id]/route")],
  ["/v1/sessions/[id]/signature", () => import("@/app/v1/sessions/[id]/signature/route")],
  ["/v1/settings/webhook", () => import("@/app/v1/settings/webhook/route")],
  ["/v1/settings/exchange", () => import("@/app/v1/settings/exchange/route")],
  ["/v1/exchange", () => import("@/app/v1/exchange/route")],
  ["/v1/exchange/quote", () => import("@/app/v1/exchange/quote/route")],
  ["/v1/settings/developer_accounts", () => import("@/app/v1/settings/developer_accounts/route")],
  ["/v1/settings/developer_accounts/message_to_sign", () => import("@/app/v1/settings/developer_accounts/message_to_sign/route")],
  ["/v1/settings/developer_accounts/[id]", () => import("@/app/v1/settings/developer_accounts/[id]/route")],
  ["/v1/events", () => import("@/app/v1/events/route")],
  ["/v1/events/[id]", () => import("@/app/v1/events/[id]/route")],
  ["/v1/subscriptions", () => import("@/app/v1/subscriptions/route")],
  ["/v1/subscriptions/test", () => import("@/app/v1/subscriptions/test/route")],
  ["/v1/subscriptions/logs", () => import("@/app/v1/subscriptions/logs/route")],
  ["/v1/subscriptions/logs/[id]", () => import("@/app/v1/subscriptions/logs/[id]/route")],
  ["/v1/subscriptions/logs/[id]/redeliver", () => import("@/app/v1/subscriptions/logs/[id]/redeliver/route")],
  ["/v1/subscriptions/[id]", () => import("@/app/v1/subscriptions/[id]/route")],
  ["/v1/subscriptions/[id]/triggers", () => import("@/app/v1/subscriptions/[id]/triggers/route")],
  ["/v1/subscriptions/[id]/triggers/[triggerId]", () => import("@/app/v1/subscriptions/[id]/triggers/[triggerId]/route")],
  ["/v1/subscriptions/[id]/triggers/[triggerId]/enable", () => import("@/app/v1/subscriptions/[id]/triggers/[triggerId]/enable/route")],
  ["/v1/forwarder_contracts", () => import("@/app/v1/forwarder_contracts/route")],
  ["/v1/forwarder_contracts/[id]", () => import("@/app/v1/forwarder_contracts/[id]/route")],
  ["/v1/paymasters", () => import("@/app/v1/paymasters/route")],
  ["/v1/paymasters/[id]", () => import("@/app/v1/paymasters/[id]/route")],
  ["/v1/paymaster_service/[publishableKey]", () => import("@/app/v1/paymaster_service/[publishableKey]/route")],
  ["/v1/sponsorship/balances", () => import("@/app/v1/sponsorship/balances/route")],
  ["/v1/sponsorship/ledger", () => import("@/app/v1/sponsorship/ledger/route")],
  // iam: credentials (sign-up, login, tokens, sessions)
  ["/iam/v1/auth/signup", () => import("@/app/iam/v1/auth/signup/route")],
  ["/iam/v1/auth/login", () => import("@/app/iam/v1/auth/login/route")],
  ["/iam/v1/auth/verify", () => import("@/app/iam/v1/auth/verify/route")],
  ["/iam/v1/verify", () => import("@/app/iam/v1/verify/route")],
  ["/iam/v1/sessions", () => import("@/app/iam/v1/sessions/route")],
  ["/iam/v1/sessions/logout", () => import("@/app/iam/v1/sessions/logout/route")],
  ["/iam/v1/me", () => import("@/app/iam/v1/me/route")],
  ["/iam/v1/password/signup", () => import("@/app/iam/v1/password/signup/route")],
  ["/iam/v1/password/login", () => import("@/app/iam/v1/password/login/route")],
  ["/iam/v1/password/reset", () => import("@/app/iam/v1/password/reset/route")],
  ["/iam/v1/password/reset/request", () => import("@/app/iam/v1/password/reset/request/route")],
  ["/iam/v1/password/verify_email", () => import("@/app/iam/v1/password/verify_email/route")],
  ["/iam/v1/password/verify_email/request", () => import("@/app/iam/v1/password/verify_email/request/route")],
  ["/iam/v1/password/link", () => import("@/app/iam/v1/password/link/route")],
  ["/iam/v1/password/unlink", () => import("@/app/iam/v1/password/unlink/route")],
  ["/iam/v1/[publishableKey]/jwks.json", () => import("@/app/iam/v1/[publishableKey]/jwks.json/route")],
  // iam: providers (configurations, verification, players)
  ["/iam/v1/oauth", () => import("@/app/iam/v1/oauth/route")],
  ["/iam/v1/config", () => import("@/app/iam/v1/config/route")],
  ["/iam/v1/oauth/verify", () => import("@/app/iam/v1/oauth/verify/route")],
  ["/iam/v1/oauth/[provider]", () => import("@/app/iam/v1/oauth/[provider]/route")],
  ["/iam/v1/oauth/[provider]/verify", () => import("@/app/iam/v1/oauth/[provider]/verify/route")],
  ["/iam/v1/oauth/[provider]/authorize", () => import("@/app/iam/v1/oauth/[provider]/authorize/route")],
  ["/iam/v1/oauth/[provider]/user/[external_user_id]", () => import("@/app/iam/v1/oauth/[provider]/user/[external_user_id]/route")],
  ["/iam/v1/authorize", () => import("@/app/iam/v1/authorize/route")],
  ["/iam/v1/players", () => import("@/app/iam/v1/players/route")],
  ["/iam/v1/players/[id]", () => import("@/app/iam/v1/players/[id]/route")],
  // iam: browser sign-in (Google, SIWE)
  ["/iam/v1/siwe/init", () => import("@/app/iam/v1/siwe/init/route")],
  ["/iam/v1/siwe/init/link", () => import("@/app/iam/v1/siwe/init/link/route")],
  ["/iam/v1/siwe/authenticate", () => import("@/app/iam/v1/siwe/authenticate/route")],
  ["/iam/v1/siwe/link", () => import("@/app/iam/v1/siwe/link/route")],
  ["/iam/v1/siwe/unlink", () => import("@/app/iam/v1/siwe/unlink/route")],
  ["/iam/v1/siwe/settings", () => import("@/app/iam/v1/siwe/settings/route")],
  ["/iam/v1/oauth/google/signin_url", () => import("@/app/iam/v1/oauth/google/signin_url/route")],
  ["/iam/v1/oauth/google/callback", () => import("@/app/iam/v1/oauth/google/callback/route")],
  ["/iam/v1/oauth/google/token", () => import("@/app/iam/v1/oauth/google/token/route")],
  ["/iam/v1/[...path]", () => import("@/app/iam/v1/[...path]/route")],
  ["/rpc/[chainId]", () => import("@/app/rpc/[chainId]/route")],
  ["/v1/[...path]", () => import("@/app/v1/[...path]/route")],
];

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
