/** Connection-level failures (postgres.js's own codes, node's, PostgreSQL's shutdown and connection classes): the database, not the query. */
const UNAVAILABLE = new Set([
  "CONNECTION_CLOSED",
  "CONNECTION_ENDED",
  "CONNECTION_DESTROYED",
  "CONNECT_TIMEOUT",
  "ECONNREFUSED",
  "ECONNRESET",
  "EPIPE",
  "57P01", // admin_shutdown (also pg_terminate_backend)
  "57P02", // crash_shutdown
  "57P03", // cannot_connect_now
  "08000",
  "08001",
  "08003",
  "08006",
]);

/** True when the error (or one it was caused by: drizzle wraps the driver's) says the database could not be reached. */
export function isDatabaseUnavailable(err: unknown): boolean {
  for (let e: unknown = err, depth = 0; e && typeof e === "object" && depth < 5; e = (e as { cause?: unknown }).cause, depth++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === "string" && UNAVAILABLE.has(code)) return true;
  }
  return false;
}
