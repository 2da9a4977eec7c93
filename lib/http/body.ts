import { ApiError, badRequest, payloadTooLarge, unsupportedMediaType } from "@/lib/errors";
import { countParams, MAX_PARAMS, parseBracketParams, tooManyParams } from "./form";

export const MAX_BODY_BYTES = 1024 * 1024;
/** Deeper JSON is refused before anything recursive (validation, serialization) walks it. */
export const MAX_JSON_DEPTH = 64;

const tooLarge = (limit: number) =>
  payloadTooLarge(`Request body is larger than ${limit === MAX_BODY_BYTES ? "1 MiB" : `${limit} bytes`}.`);

/**
 * The body as text, counting bytes as they arrive: reading stops at `limit`, whether or not a
 * Content-Length was sent (a chunked body says nothing of its size), so no more than `limit` is ever held.
 */
export async function readText(request: Request, limit = MAX_BODY_BYTES): Promise<string> {
  const declared = request.headers.get("content-length");
  if (declared !== null && Number(declared) > limit) throw tooLarge(limit);
  if (!request.body) return "";
  const reader = request.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      size += value.byteLength;
      if (size > limit) {
        await reader.cancel().catch(() => {});
        throw tooLarge(limit);
      }
      chunks.push(value);
    }
  } catch (err) {
    if (err instanceof ApiError) throw err;
    throw badRequest("The request body could not be read completely.");
  }
  return new TextDecoder().decode(Buffer.concat(chunks, size));
}

/**
 * Members of objects in a JSON body, at any depth: far above what any request needs (a large
 * contract's ABI has a few thousand), far below the 170,000 a 1 MiB body can hold.
 */
export const MAX_JSON_MEMBERS = 10_000;

/**
 * The deepest nesting of arrays and objects in JSON text and how many object members it has, by
 * one scan that skips strings: iterative, so a body nested 100,000 deep costs a loop, not a stack.
 */
export function jsonShape(text: string): { depth: number; members: number } {
  let depth = 0;
  let max = 0;
  let members = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c) i++; // backslash: skip the escaped character
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x3a) members++; // ':' outside strings ends an object member's name
    else if (c === 0x7b || c === 0x5b) max = Math.max(max, ++depth);
    else if (c === 0x7d || c === 0x5d) depth--;
  }
  return { depth: max, members };
}

export function parseJsonObject(text: string, maxParams = MAX_PARAMS): Record<string, unknown> {
  const shape = jsonShape(text);
  if (shape.depth > MAX_JSON_DEPTH) throw badRequest(`Request body is nested more than ${MAX_JSON_DEPTH} levels deep.`);
  if (shape.members > MAX_JSON_MEMBERS) {
    throw badRequest(`Request body has too many object members: at most ${MAX_JSON_MEMBERS.toLocaleString("en-US")} are accepted.`);
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw badRequest("Request body is not valid JSON.");
  }
  if (parsed === null || typeof parsed !== "object" || Array.isArray(parsed)) {
    throw badRequest("Request body must be a JSON object.");
  }
  if (Object.keys(parsed).length > maxParams) throw tooManyParams();
  return parsed as Record<string, unknown>;
}

/** A form body: its parameters are counted (a scan for `&`) before any is decoded. */
export function parseForm(text: string, budget = MAX_PARAMS): Record<string, unknown> {
  if (countParams(text) > budget) throw tooManyParams();
  return parseBracketParams(new URLSearchParams(text), budget);
}

/**
 * Reads a JSON or form-encoded body into one plain object. `paramBudget`: how many parameters (form
 * parameters, or a JSON body's top-level members) it may hold: what the query string left of MAX_PARAMS.
 */
export async function readBody(request: Request, limit = MAX_BODY_BYTES, paramBudget = MAX_PARAMS): Promise<Record<string, unknown>> {
  const type = (request.headers.get("content-type") ?? "").split(";")[0]!.trim().toLowerCase();
  const json = type === "application/json" || type.endsWith("+json");
  const text = await readText(request, limit);
  if (text.trim() === "") return {};
  if (json) return parseJsonObject(text, paramBudget);
  if (type === "application/x-www-form-urlencoded" || type === "") return parseForm(text, paramBudget);
  throw unsupportedMediaType(`Unsupported Content-Type '${type}'. Send application/x-www-form-urlencoded or application/json.`);
}
