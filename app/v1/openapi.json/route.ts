import { operations } from "@/lib/api";
import { openApiJson } from "@/lib/http/openapi";
import { requestOrigin } from "@/lib/http/origin";
import { methodNotAllowed } from "@/lib/http/routes";

/** The API description, derived from the same schemas that validate requests (built once, see openApiJson). */
export function GET(request: Request) {
  return new Response(openApiJson(operations, requestOrigin(request.headers, request.url)), {
    headers: { "content-type": "application/json" },
  });
}

// Next.js would answer these with an empty 405.
export const POST = methodNotAllowed("GET");
export const PUT = methodNotAllowed("GET");
export const PATCH = methodNotAllowed("GET");
export const DELETE = methodNotAllowed("GET");
