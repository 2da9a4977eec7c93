import { operations } from "@/lib/api";
import { openApiJson } from "@/lib/http/openapi";
import { requestOrigin } from "@/lib/http/origin";

/** The API description, derived from the same schemas that validate requests (built once, see openApiJson). */
export function GET(request: Request) {
  return new Response(openApiJson(operations, requestOrigin(request.headers, request.url)), {
    headers: { "content-type": "application/json" },
  });
}
