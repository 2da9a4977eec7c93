"use server";

import { createSubscription, createTrigger, deleteSubscription, deleteTrigger, enableTrigger, redeliverLog, testTrigger } from "@/lib/subscriptions/operations";
import type { FormState } from "./form-state";
import { submitTypedOperation } from "./operations";

/** The project and mode a subscriptions form acts in (checked against the developer on every call). */
export interface Scope {
  projectId: string;
  mode: string;
}

/** New subscription: the answer holds each trigger's signing secret, shown this once. */
export async function createSubscriptionAction(scope: Scope, _state: FormState, form: FormData): Promise<FormState> {
  return withoutResult(await submitTypedOperation(createSubscription, scope, form));
}

export async function deleteSubscriptionAction(scope: Scope, id: string, _state: FormState, form: FormData): Promise<FormState> {
  return withoutResult(await submitTypedOperation(deleteSubscription, { ...scope, params: { id } }, form));
}

/** Another target for a subscription; its signing secret is in this answer only. */
export async function addTriggerAction(scope: Scope, id: string, _state: FormState, form: FormData): Promise<FormState> {
  return withoutResult(await submitTypedOperation(createTrigger, { ...scope, params: { id } }, form));
}

export async function deleteTriggerAction(scope: Scope, id: string, triggerId: string, _state: FormState, form: FormData): Promise<FormState> {
  return withoutResult(await submitTypedOperation(deleteTrigger, { ...scope, params: { id, triggerId } }, form));
}

/** "Re-enable" a trigger the delivery path disabled after days of failures. */
export async function enableTriggerAction(scope: Scope, id: string, triggerId: string, _state: FormState, form: FormData): Promise<FormState> {
  return withoutResult(await submitTypedOperation(enableTrigger, { ...scope, params: { id, triggerId } }, form));
}

/**
 * "Send test event": to a subscription's triggers (`subscription` bound) or to the URL in the
 * form's `target`. The answer lists each attempt, so the page shows what the receivers said.
 */
export async function sendTestAction(scope: Scope, subscription: string | null, _state: FormState, form: FormData): Promise<FormState> {
  if (subscription) form.set("subscription", subscription);
  const state = await submitTypedOperation(testTrigger, scope, form);
  if (state.result && state.result.deliveries.length === 0) return { error: { message: "Nothing to send to: no enabled trigger." } };
  return withoutResult(state);
}

/** One new attempt of a logged event (same body and webhook-id) to the same target, answering the new log entry. */
export async function redeliverAction(scope: Scope, logId: string, _state: FormState, form: FormData): Promise<FormState> {
  return withoutResult(await submitTypedOperation(redeliverLog, { ...scope, params: { id: logId } }, form));
}

/** The browser gets the result once, as `data`. */
function withoutResult({ result: _result, ...state }: FormState & { result?: unknown }): FormState {
  return state;
}
