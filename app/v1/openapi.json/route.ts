import { operations } from "@/lib/api";
import { buildOpenApi } from "@/lib/http/openapi";
import { requestOrigin } from "@/lib/http/origin";

/** The API description, derived from the same schemas that validate requests. */
export function GET(request: Request) {
  return Response.json(buildOpenApi(operations, requestOrigin(request.headers, request.url)));
}
