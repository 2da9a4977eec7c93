import { notFound } from "next/navigation";
import { operations } from "@/lib/api";
import { getDb } from "@/lib/db/client";
import { ApiError, badRequest, type ErrorDetails } from "@/lib/http/errors";
import { parseBracketParams } from "@/lib/http/form";
import { validate } from "@/lib/http/validate";
import type { ProjectContext } from "@/lib/projects/service";

export type OperationOutcome<T = unknown> =
  | { ok: true; data: T }
  | { ok: false; status: number; error: { message: string; details?: ErrorDetails } };

const byId = new Map(operations.map((op) => [op.operationId, op]));

/**
 * Runs a public API operation for the dashboard, exactly as the API would (same validation,
 * same rules, same serialized resource), in the project and mode the developer is looking at.
 */
export async function runOperation<T = Record<string, unknown>>(
  ctx: ProjectContext,
  operationId: string,
  input: Record<string, unknown> | URLSearchParams | FormData = {},
  params: Record<string, string> = {},
): Promise<OperationOutcome<T>> {
  const op = byId.get(operationId);
  if (!op) throw new Error(`unknown operation ${operationId}`);
  try {
    const raw = input instanceof URLSearchParams || input instanceof FormData ? formInput(input) : input;
    const validated = validate(op.input, raw);
    const path = op.path.replace(/\{(\w+)\}/g, (_, name: string) => encodeURIComponent(params[name] ?? ""));
    const data = (await op.run({ db: await getDb(), project: ctx, input: validated, params, path })) as T;
    return { ok: true, data };
  } catch (err) {
    if (err instanceof ApiError) return { ok: false, status: err.status, error: { message: err.message, details: err.details } };
    throw err;
  }
}

/**
 * Form fields in the API's bracket notation; empty fields are left out, as a client would omit
 * them. A field named in `$json` (a pasted ABI, say) holds JSON, sent as JSON would send it.
 * Other names starting with `$` are the page's own (React's included).
 */
function formInput(form: URLSearchParams | FormData): Record<string, unknown> {
  const params = new URLSearchParams();
  const jsonFields = new Set(form.getAll("$json").map(String));
  const json: Record<string, unknown> = {};
  for (const [key, value] of form.entries()) {
    if (typeof value !== "string" || value === "" || key.startsWith("$")) continue;
    if (!jsonFields.has(key)) params.append(key, value);
    else {
      try {
        json[key] = JSON.parse(value);
      } catch (err) {
        throw badRequest(`Invalid parameter ${key}: not valid JSON (${(err as Error).message}).`, { [key]: { message: "Not valid JSON." } });
      }
    }
  }
  return { ...parseBracketParams(params), ...json };
}

/** The operation's data for a page: a missing resource is the page's 404, a bad filter its error message. */
export async function readOperation<T = Record<string, unknown>>(ctx: ProjectContext, operationId: string, input: Record<string, unknown> | URLSearchParams = {}, params: Record<string, string> = {}): Promise<T> {
  const outcome = await runOperation<T>(ctx, operationId, input, params);
  if (outcome.ok) return outcome.data;
  if (outcome.status === 404) notFound();
  throw new Error(outcome.error.message);
}

/** A lib lookup for a page: a resource missing from the developer's project and mode is the page's 404. */
export async function found<T>(lookup: Promise<T>): Promise<T> {
  try {
    return await lookup;
  } catch (err) {
    if (err instanceof ApiError && err.status === 404) notFound();
    throw err;
  }
}
