"use server";

import type { FormState } from "./form-state";
import { operationById, submitTypedOperation } from "./operations";

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
  const { result: _result, ...state } = await submitTypedOperation(operationById(target.operationId), target, form);
  return state;
}
