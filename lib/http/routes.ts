import { newId } from "@/lib/ids";
import { missing, notAllowed } from "@/lib/errors";
import { errorResponse, handle } from "./handle";
import type { HttpMethod, Operation } from "./operation";

const METHODS = ["GET", "POST", "PUT", "PATCH", "DELETE"] as const;
type RouteHandler = ReturnType<typeof handle>;

/**
 * The exports of one route file: a handler per operation, and a JSON 405 (with `Allow`)
 * for every other method, so no bad request gets an empty or HTML answer.
 */
export function routes(...ops: Operation[]): Record<(typeof METHODS)[number], RouteHandler> {
  const byMethod = new Map<HttpMethod, RouteHandler>(ops.map((op) => [op.method, handle(op)]));
  const notAllowed = methodNotAllowed([...byMethod.keys()].join(", "));
  return Object.fromEntries(METHODS.map((m) => [m, byMethod.get(m as HttpMethod) ?? notAllowed])) as Record<
    (typeof METHODS)[number],
    RouteHandler
  >;
}

/** The JSON 405 (with `Allow`) for a method a route does not serve; a route file exports it for each such method. */
export function methodNotAllowed(allow: string): RouteHandler {
  return async (request) =>
    errorResponse(notAllowed(`${request.method} is not allowed here. Allowed: ${allow}.`, allow), newId("request"));
}

/** For paths that match no endpoint. */
export async function unknownRoute(request: Request): Promise<Response> {
  const path = new URL(request.url).pathname;
  return errorResponse(
    missing(`Unrecognized request URL (${request.method}: ${path}).`),
    newId("request"),
  );
}
