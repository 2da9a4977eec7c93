"use server";

import { evaluatePolicy } from "@/lib/policy-actions/operations";
import { projectScope } from "./context";
import type { FormState } from "./form-state";
import { runOperation } from "./operations";

/**
 * The policy page's dry run: POST /v1/policies/{id}/evaluate on the form's fields, as the API runs it, in the
 * project and mode the developer belongs to. It signs, holds and records nothing, so no page is refreshed after it.
 */
export async function evaluatePolicyAction(target: { projectId: string; mode: string; policyId: string }, _state: FormState, form: FormData): Promise<FormState> {
  const scope = await projectScope(target.projectId, target.mode);
  const outcome = await runOperation(scope.ctx, evaluatePolicy, form, { id: target.policyId });
  return outcome.ok ? { ok: true, data: outcome.data } : { error: outcome.error };
}
