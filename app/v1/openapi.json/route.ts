import { operations } from "@/lib/api";
import { buildOpenApi } from "@/lib/http/openapi";

/** The API description, derived from the same schemas that validate requests. */
export function GET(request: Request) {
  const origin = new URL(request.url).origin;
  return Response.json(buildOpenApi(operations, origin));
}
