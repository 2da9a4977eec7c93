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

export const conflict = (message: string) => new ApiError(409, "invalid_request_error", message);

/**
 * A missing resource named in the body or query (not the path) is a bad parameter: a 400 that
 * names the parameter, as opposed to the 404 of a missing path resource.
 */
export async function referenced<T>(lookup: Promise<T>, param: string, value: string): Promise<T> {
  try {
    return await lookup;
  } catch (err) {
    if (err instanceof ApiError && err.status === 404) throw badRequest(err.message, { [param]: { value, message: err.message } });
    throw err;
  }
}
