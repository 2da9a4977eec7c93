export type ErrorType =
  | "invalid_request_error"
  | "authentication_error"
  | "permission_error"
  | "idempotency_error"
  | "rate_limit_error"
  | "sponsorship_declined"
  | "api_error";

export type ErrorDetails = Record<string, { value?: unknown; message: string }>;

/** An error the client can act on; everything else is answered as a generic 500. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly type: ErrorType,
    message: string,
    readonly details?: ErrorDetails,
    readonly headers?: Record<string, string>,
  ) {
    super(message);
  }

  toJSON(): { error: { type: ErrorType; message: string; code?: string; details?: unknown } } {
    return { error: { type: this.type, message: this.message, ...(this.details ? { details: readableDetails(this.details) } : {}) } };
  }
}

/** Entries of `details` an error shows; the message says how many more there were. */
export const MAX_DETAILS = 20;
const MAX_VALUE_CHARS = 200;
/** A name or value as an error shows it: cut past MAX_VALUE_CHARS, so an answer never echoes a flood back. */
const clip = (text: string) => (text.length > MAX_VALUE_CHARS ? `${text.slice(0, MAX_VALUE_CHARS)}…` : text);

/** An echoed value, short enough to read: long text is cut, large structures left out. */
function readableValue(value: unknown): { value?: unknown } {
  if (typeof value === "string") return { value: clip(value) };
  try {
    const size = JSON.stringify(value)?.length ?? 0;
    return size <= MAX_VALUE_CHARS * 5 ? { value } : {};
  } catch {
    return {};
  }
}

/** At most MAX_DETAILS entries, each readable: a flood of bad parameters answers a short error. */
function readableDetails(details: ErrorDetails): ErrorDetails {
  const out: ErrorDetails = {};
  let n = 0;
  for (const [name, detail] of Object.entries(details)) {
    if (n++ >= MAX_DETAILS) break;
    out[clip(name)] = {
      ...("value" in detail ? readableValue(detail.value) : {}),
      message: detail.message,
    };
  }
  return out;
}

/** `a, b, c and 97 more`: names for a message, at most MAX_DETAILS of them (`uncounted`: more not in `names`). */
export function nameList(names: string[], uncounted = 0): string {
  const shown = names.slice(0, MAX_DETAILS).map(clip);
  const rest = names.length - shown.length + uncounted;
  return rest > 0 ? `${shown.join(", ")} and ${rest.toLocaleString("en-US")} more` : shown.join(", ");
}

export const badRequest = (message: string, details?: ErrorDetails) =>
  new ApiError(400, "invalid_request_error", message, details);

export const notFound = (resource: string, id: string) =>
  new ApiError(404, "invalid_request_error", `No such ${resource}: '${clip(id)}'`);

/** A 404 in words of its own (a missing resource the `notFound` form does not fit). */
export const missing = (message: string, details?: ErrorDetails) => new ApiError(404, "invalid_request_error", message, details);

export const conflict = (message: string) => new ApiError(409, "invalid_request_error", message);

/** A 409 of the Idempotency-Key: the key's first request is still running, or it was sent with another request. */
export const idempotencyConflict = (message: string, headers?: Record<string, string>) =>
  new ApiError(409, "idempotency_error", message, undefined, headers);

/**
 * What a 401 answers in WWW-Authenticate, by the credential the route takes: RFC 9110 (15.5.2) requires a 401 to
 * carry at least one challenge. API keys (also accepted as the HTTP Basic user name, not offered here, so browsers
 * show no password prompt) and player tokens are Bearer tokens; the dashboard's cookie and a signing link's token
 * have no standard scheme, so theirs name what to send.
 */
export const challenges = {
  bearer: 'Bearer realm="api"',
  metrics: 'Bearer realm="metrics"',
  dashboard: 'Session realm="dashboard"',
  signingLink: 'SigningLink realm="signing"',
} as const;

/** 401: the credential is missing or wrong; it always says (WWW-Authenticate) how to send one. */
export const unauthorized = (message: string, details?: ErrorDetails, challenge: string = challenges.bearer) =>
  new ApiError(401, "authentication_error", message, details, { "www-authenticate": challenge });

/** 403: the caller is known but may not do this (a `permission_error`, unless the request itself is at fault). */
export const forbidden = (message: string, type: "permission_error" | "invalid_request_error" = "permission_error") =>
  new ApiError(403, type, message);

export const notAllowed = (message: string, allow: string) =>
  new ApiError(405, "invalid_request_error", message, undefined, { allow });

export const payloadTooLarge = (message: string) => new ApiError(413, "invalid_request_error", message);

export const unsupportedMediaType = (message: string) => new ApiError(415, "invalid_request_error", message);

/** 429 with Retry-After, the message saying it too. */
export const tooManyRequests = (message: string, retryAfter: number) =>
  new ApiError(429, "rate_limit_error", `${message}; retry after ${retryAfter}s.`, undefined, { "retry-after": String(retryAfter) });

/** 502: something this service depends on (a chain node, a paymaster, a sign-in provider) did not answer well. */
export const badGateway = (message: string, details?: ErrorDetails) => new ApiError(502, "api_error", message, details);

/** 503: the service cannot do this yet (contracts not deployed, a setting missing, an account to fund). */
export const unavailable = (message: string) => new ApiError(503, "api_error", message);

/**
 * A missing resource named in the body or query (not the path) is a bad parameter: a 400 that
 * names the parameter, as opposed to the 404 of a missing path resource.
 */
export async function referenced<T>(lookup: Promise<T>, param: string, value: string): Promise<T> {
  try {
    return await lookup;
  } catch (err) {
    if (err instanceof ApiError && err.status === 404) throw missingReference(param, value, err.message);
    throw err;
  }
}

/** referenced's 400 for a lookup made without it: `message` is the lookup's 404 (by default notFound's for `param`). */
export const missingReference = (param: string, value: string, message = notFound(param, value).message) =>
  badRequest(message, { [param]: { value, message } });
