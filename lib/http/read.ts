import { readBody } from "./body";
import { ApiError, badRequest } from "@/lib/errors";
import { MAX_PARAMS, parseBracketParams } from "./form";
import type { Operation } from "./operation";
import { unstorable, validate } from "./validate";
import { log } from "@/lib/log";

export type RouteParams = Record<string, string | string[] | undefined>;

/**
 * What reading a request may throw that is not an ApiError (a parser's RangeError, a library's
 * own error class) comes from the request's content, not from the service: a 400, never a 500.
 */
export function asClientError(err: unknown, what = "request"): ApiError {
  if (err instanceof ApiError) return err;
  // Logged, as it names a check that is missing; the request's content is not.
  log.warn({ error: err instanceof Error ? `${err.name}: ${err.message.slice(0, 200)}` : String(err).slice(0, 200) }, "unreadable request");
  return badRequest(`The ${what} could not be read: check its encoding and parameters.`);
}

/** The boundary: anything thrown while `read` runs is the client's error (see asClientError). */
export async function readingRequest<T>(read: () => Promise<T> | T, what?: string): Promise<T> {
  try {
    return await read();
  } catch (err) {
    throw asClientError(err, what);
  }
}

/**
 * Path parameters, as Next.js gives them: percent-decoded once already (a path that does not
 * decode never gets here: see unroutable.ts). What no database can hold is refused, naming the parameter.
 */
export function pathParams(raw: RouteParams): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(raw)) {
    if (typeof value !== "string") continue;
    const problem = unstorable(value);
    if (problem) throw badRequest(`Invalid path parameter ${name}: ${problem}`, { [name]: { message: problem } });
    out[name] = value;
  }
  return out;
}

/** Query, body and path of a request to `op`, validated: every way it can fail is a 4xx. */
export function readRequest(op: Operation, request: Request, url: URL, readAlready?: Record<string, unknown>) {
  return readingRequest(async () => {
    const query = parseBracketParams(url.searchParams);
    const raw: Record<string, unknown> =
      op.method === "GET" || op.method === "DELETE" ? query : { ...query, ...(readAlready ?? (await readBody(request, undefined, MAX_PARAMS - url.searchParams.size))) };
    const input = validate(op.input, raw);
    return { raw, input };
  });
}
