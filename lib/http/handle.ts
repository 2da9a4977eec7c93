import { isNodeFault } from "@/lib/chain/clients";
import { getDb, type Db } from "@/lib/db/client";
import { isDatabaseUnavailable } from "@/lib/db/unavailable";
import { newId } from "@/lib/ids";
import type { ProjectContext } from "@/lib/tenant";
import { requireHttps } from "./auth";
import { ApiError } from "@/lib/errors";
import { requestOrigin } from "./origin";
import { withProjectShare } from "./concurrency";
import { clientAddress } from "./client-address";
import { enforce, laneOf, limits, takeToken, type Spender } from "./rate-limit";
import { credentialOf, requestHash, runIdempotent } from "./idempotency";
import type { Operation } from "./operation";
import { budgetOf, secretKey } from "./principals";
import { pathParams as readPathParams, readingRequest, readRequest, type RouteParams } from "./read";
import { log } from "@/lib/log";
import { observeRequest } from "@/lib/metrics";
import { recordRequest } from "./request-log";
import { withRequestId } from "./request-context";

type RouteContext = { params: Promise<RouteParams> };

/** A JSON answer, never cached. */
export function jsonResponse(body: unknown, status = 200, headers: Record<string, string> = {}) {
  return new Response(JSON.stringify(body), {
    status,
    headers: { "content-type": "application/json; charset=utf-8", "cache-control": "no-store", ...headers },
  });
}

export function errorResponse(err: unknown, requestId: string): Response {
  if (err instanceof ApiError) return jsonResponse(err.toJSON(), err.status, err.headers);
  // A chain node that did not answer, or failed the request, for a call no operation wrapped in onChain: the client's
  // retry may well work. Asked first: a node's dropped connection is an ECONNRESET too, inside viem's error.
  if (isNodeFault(err)) {
    log.warn({ requestId, err }, "a chain node did not answer or failed the request");
    return jsonResponse({ error: { type: "api_error", message: "A chain node did not answer, or failed the request. Try again shortly." } }, 502, { "retry-after": "1" });
  }
  // The database was unreachable for a moment (a failover, connections cut): the client should retry, with its
  // Idempotency-Key for a write, rather than read it as the service's bug.
  if (isDatabaseUnavailable(err)) {
    log.warn({ requestId, err }, "the database could not be reached");
    return jsonResponse({ error: { type: "api_error", message: "The database is briefly unavailable. Retry the request." } }, 503, { "retry-after": "1" });
  }
  // Unexpected: log it for operators, tell the client only the request id.
  log.error({ requestId, err }, "unexpected error");
  return jsonResponse(
    { error: { type: "api_error", message: `An unexpected error occurred. Quote request id ${requestId} when reporting it.` } },
    500,
  );
}

/** Wraps an operation into a Next.js route handler: the one request pipeline of the API. */
export function handle(op: Operation) {
  return (request: Request, route?: RouteContext): Promise<Response> => {
    const requestId = newId("request");
    return withRequestId(requestId, () => run(request, requestId, route));
  };

  async function run(request: Request, requestId: string, route?: RouteContext): Promise<Response> {
    const started = performance.now();
    const url = new URL(request.url);
    let db: Db | null = null;
    let project: ProjectContext | null = null;
    let response: Response;
    const strategy = op.auth ?? secretKey;
    try {
      requireHttps(request);
      db = await getDb();
      // Strategies read a path parameter or two as they are; the parameters are checked after authentication.
      const routeParams = (await route?.params) ?? {};
      const unchecked = Object.fromEntries(Object.entries(routeParams).filter((e): e is [string, string] => typeof e[1] === "string"));
      if (strategy.perAddress) await enforce(db, `public:${clientAddress(request.headers)}`, limits.public(), "Too many requests from your address");
      const caller = await strategy.authenticate(db, { request, url, params: unchecked }).catch(async (err: unknown) => {
        // Unauthenticated callers are limited per client address: guessing credentials costs a 429 soon.
        if (err instanceof ApiError && err.status === 401) {
          await enforce(db!, `unauthenticated:${clientAddress(request.headers)}`, limits.public(), "Too many requests with invalid credentials from your address");
        }
        throw err;
      });
      project = caller.project;
      // The secret key spends the project's budget, public credentials a budget of their own (per client address too).
      const budget = budgetOf(strategy, caller);
      const spender: Spender = budget === "public" ? { budget, address: clientAddress(request.headers) } : { budget: "secret" };
      if (project && budget) await takeToken(db, project, op, undefined, spender);
      const params = await readingRequest(() => readPathParams(routeParams));
      const { raw, input } = await readRequest(op, request, url, caller.body);
      const activeDb = db;
      // No transaction wraps the operation, with an Idempotency-Key or not: its remote calls hold none open.
      const context = () => ({
        db: activeDb,
        project: caller.project,
        principal: caller.principal,
        input,
        params,
        path: url.pathname,
        origin: requestOrigin(request.headers, request.url),
        headers: request.headers,
        clientAddress: clientAddress(request.headers),
      });
      const run = () => op.run(context());
      const execute = async () => {
        const body = project && op.cost === "chain" ? await withProjectShare(laneOf(project, spender), run) : await run();
        if (process.env.VITEST && !(body instanceof Response)) op.response.parse(body); // the documented shape is the real shape
        return { status: 200, body };
      };
      const idempotencyKey = request.headers.get("idempotency-key");
      if (op.method === "POST" && idempotencyKey && project) {
        const hash = requestHash(op.method, url.pathname, raw);
        const recover = op.recover && ((lost: string) => op.recover!(context(), lost));
        const outcome = await runIdempotent(db, { project, credential: credentialOf(caller.principal), requestId, recover }, idempotencyKey, hash, execute);
        response = jsonResponse(outcome.body, outcome.status, outcome.replayed ? { "idempotent-replayed": "true" } : {});
      } else {
        const outcome = await execute();
        response = outcome.body instanceof Response ? outcome.body : jsonResponse(outcome.body, outcome.status);
      }
    } catch (err) {
      response = errorResponse(err, requestId);
    }
    response.headers.set("x-request-id", requestId);
    const durationMs = performance.now() - started;
    log.info(
      { requestId, projectId: project?.projectId, mode: project ? (project.livemode ? "live" : "test") : undefined, operation: op.operationId, method: request.method, status: response.status, durationMs: Math.round(durationMs * 10) / 10 },
      "request",
    );
    observeRequest(op.operationId, response.status, durationMs);
    if (db && strategy.apiRequest) {
      recordRequest(db, {
        id: requestId,
        project,
        method: request.method,
        path: url.pathname,
        status: response.status,
        durationMs,
      });
    }
    return response;
  }
}
