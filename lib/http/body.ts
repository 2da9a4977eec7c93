import { ApiError, badRequest } from "./errors";
import { parseBracketParams } from "./form";

const MAX_BODY_BYTES = 1024 * 1024;

/** Reads a JSON or form-encoded body into one plain object. */
export async function readBody(request: Request): Promise<Record<string, unknown>> {
  const declared = Number(request.headers.get("content-length") ?? 0);
  if (declared > MAX_BODY_BYTES) throw new ApiError(413, "invalid_request_error", "Request body is larger than 1 MiB.");
  const text = await request.text();
  if (Buffer.byteLength(text) > MAX_BODY_BYTES) throw new ApiError(413, "invalid_request_error", "Request body is larger than 1 MiB.");
  if (text.trim() === "") return {};
  const type = (request.headers.get("content-type") ?? "").split(";")[0]!.trim().toLowerCase();
  if (type === "application/json" || type.endsWith("+json")) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      throw badRequest("Request body is not valid JSON.");
    }
    if (parsed === null || typeof parsed !== "object" || Array.isArray(parsed)) {
      throw badRequest("Request body must be a JSON object.");
    }
    return parsed as Record<string, unknown>;
  }
  if (type === "application/x-www-form-urlencoded" || type === "") {
    return parseBracketParams(new URLSearchParams(text));
  }
  throw new ApiError(
    415,
    "invalid_request_error",
    `Unsupported Content-Type '${type}'. Send application/x-www-form-urlencoded or application/json.`,
  );
}
