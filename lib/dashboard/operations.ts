import { revalidatePath } from "next/cache";
import { notFound, redirect } from "next/navigation";
import type { z } from "zod";
import { getDb } from "@/lib/db/client";
import { ApiError, badRequest, type ErrorDetails } from "@/lib/errors";
import { parseBracketParams } from "@/lib/http/form";
import type { Operation } from "@/lib/http/operation";
import { validate } from "@/lib/http/validate";
import type { ProjectContext } from "@/lib/tenant";
import { projectScope } from "./context";
import type { FormState } from "./form-state";

export type OperationOutcome<T = unknown> =
  | { ok: true; data: T }
  | { ok: false; status: number; error: { message: string; details?: ErrorDetails } };

type OperationInput = Record<string, unknown> | URLSearchParams | FormData;

/**
 * Runs a public API operation for the dashboard, exactly as the API would (same validation,
 * same rules, same serialized resource), in the project and mode the developer is looking at.
 * Given the operation itself (never its id), so the outcome has the operation's result type.
 */
export async function runOperation<I extends z.ZodType, R>(ctx: ProjectContext, op: Operation<I, R>, input: OperationInput = {}, params: Record<string, string> = {}): Promise<OperationOutcome<R>> {
  try {
    const raw = input instanceof URLSearchParams || input instanceof FormData ? formInput(input) : input;
    const validated = validate(op.input, raw);
    const path = op.path.replace(/\{(\w+)\}/g, (_, name: string) => encodeURIComponent(params[name] ?? ""));
    const data = await op.run({ db: await getDb(), project: ctx, input: validated, params, path });
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
export async function readOperation<I extends z.ZodType, R>(ctx: ProjectContext, operation: Operation<I, R>, input: Record<string, unknown> | URLSearchParams = {}, params: Record<string, string> = {}): Promise<R> {
  const outcome = await runOperation(ctx, operation, input, params);
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

/**
 * What a dashboard form's server action does with an operation: check the developer belongs to
 * the project, run the operation on the form, refresh the project's pages and answer the
 * operation's result (or go to `redirectTo`, `{id}` being the created resource's id).
 * Server actions call it with the operation object, which never crosses to the browser.
 */
export async function submitTypedOperation<I extends z.ZodType, R>(
  operation: Operation<I, R>,
  target: { projectId: string; mode: string; params?: Record<string, string>; redirectTo?: string },
  form: FormData | Record<string, unknown>,
): Promise<FormState & { result?: R }> {
  const scope = await projectScope(target.projectId, target.mode);
  const outcome = await runOperation(scope.ctx, operation, form, target.params);
  if (!outcome.ok) return { error: outcome.error };
  revalidatePath(scope.base, "layout");
  const data = outcome.data as Record<string, unknown>;
  if (target.redirectTo) {
    const to = target.redirectTo.replace("{id}", String(data.id ?? ""));
    if (to.startsWith("/") && !to.startsWith("//")) redirect(`${scope.base}${to}`);
  }
  return { ok: true, data, result: outcome.data };
}
