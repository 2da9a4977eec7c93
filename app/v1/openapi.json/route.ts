import { operations } from "@/lib/api";
import { buildOpenApi } from "@/lib/http/openapi";

/** The API description, derived from the same schemas that validate requests. */
export function GET(request: Request) {
  const url = new URL(request.url);
  const host = request.headers.get("x-forwarded-host") ?? request.headers.get("host") ?? url.host;
  const proto = request.headers.get("x-forwarded-proto") ?? url.protocol.replace(":", "");
  return Response.json(buildOpenApi(operations, `${proto}://${host}`));
}
