export type ErrorType =
  | "invalid_request_error"
  | "authentication_error"
  | "permission_error"
  | "idempotency_error"
  | "rate_limit_error"
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

  toJSON() {
    return { error: { type: this.type, message: this.message, ...(this.details ? { details: this.details } : {}) } };
  }
}

export const badRequest = (message: string, details?: ErrorDetails) =>
  new ApiError(400, "invalid_request_error", message, details);

export const notFound = (resource: string, id: string) =>
  new ApiError(404, "invalid_request_error", `No such ${resource}: '${id}'`);

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
