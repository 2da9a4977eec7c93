"use server";

import { revalidatePath } from "next/cache";
import { redirect } from "next/navigation";
import type { FormState } from "./form-state";
import { projectScope } from "./context";
import { runOperation } from "./operations";

export interface OperationTarget {
  projectId: string;
  mode: string;
  operationId: string;
  params?: Record<string, string>;
  /** Where to go on success, within the project; `{id}` becomes the created resource's id. */
  redirectTo?: string;
}

/**
 * The dashboard's forms run the public API's operations: the same validation and rules as a
 * request with the project's secret key, after checking the developer belongs to the project.
 */
export async function submitOperation(target: OperationTarget, _state: FormState, form: FormData): Promise<FormState> {
  const scope = await projectScope(target.projectId, target.mode);
  const outcome = await runOperation<Record<string, unknown>>(scope.ctx, target.operationId, form, target.params);
  if (!outcome.ok) return { error: outcome.error };
  revalidatePath(scope.base, "layout");
  if (target.redirectTo) {
    const to = target.redirectTo.replace("{id}", String(outcome.data.id ?? ""));
    // Only pages of the same project and mode: the target comes from the browser.
    if (to.startsWith("/") && !to.startsWith("//")) redirect(`${scope.base}${to}`);
  }
  return { ok: true, data: outcome.data };
}
