"use server";

import { createAccount, syncAccount } from "@/lib/accounts/operations";
import { createContract, deleteContract, readContract } from "@/lib/contracts/operations";
import { createEvent, deleteEvent } from "@/lib/monitors/operations";
import { createSwap, quoteSwap } from "@/lib/exchange/operations";
import type { Operation } from "@/lib/http/operation";
import { createIntent } from "@/lib/intents/operations";
import { createPaymaster, deletePaymaster } from "@/lib/paymasters/operations";
import { createPlayer, deletePlayer } from "@/lib/players/operations";
import { createPolicy, createPolicyRule, deletePolicy, deletePolicyRule, disablePolicy, enablePolicy, updatePolicy, updatePolicyRule } from "@/lib/policies/operations";
import { revokeSession } from "@/lib/sessions/operations";
import { removeWebhook } from "@/lib/webhooks/operations";
import type { FormState } from "./form-state";
import { submitTypedOperation } from "./operations";

/**
 * The operations the dashboard's generic forms submit, by operation id. A form's server action
 * is bound on the server and called from the browser, so it can only carry the operation's id
 * (an operation object, with its schemas and `run`, does not cross to the browser); the id is
 * one of these, checked by the compiler where the page binds it and here when the browser
 * sends it back. Forms with their own server action (lib/dashboard/subscriptions.ts, say) call
 * `submitTypedOperation` with the operation object instead.
 */
const formOperations = {
  createAccount,
  syncAccount,
  createContract,
  readContract,
  deleteContract,
  createEvent,
  deleteEvent,
  quoteSwap,
  createSwap,
  createTransactionIntent: createIntent,
  createPaymaster,
  deletePaymaster,
  createPlayer,
  deletePlayer,
  createPolicy,
  updatePolicy,
  deletePolicy,
  enablePolicy,
  disablePolicy,
  createPolicyRule,
  updatePolicyRule,
  deletePolicyRule,
  revokeSession,
  removeWebhook,
};

/** The id of an operation a dashboard form may submit through `submitOperation`. */
export type FormOperationId = keyof typeof formOperations;

export interface OperationTarget {
  projectId: string;
  mode: string;
  operationId: FormOperationId;
  params?: Record<string, string>;
  /** Where to go on success, within the project; `{id}` becomes the created resource's id. */
  redirectTo?: string;
}

/**
 * The dashboard's forms run the public API's operations: the same validation and rules as a
 * request with the project's secret key, after checking the developer belongs to the project.
 */
export async function submitOperation(target: OperationTarget, _state: FormState, form: FormData): Promise<FormState> {
  // The target comes back from the browser: only the forms' operations are run.
  const operation: Operation | undefined = Object.hasOwn(formOperations, target.operationId) ? formOperations[target.operationId] : undefined;
  if (!operation) throw new Error(`unknown operation ${String(target.operationId)}`);
  const { result: _result, ...state } = await submitTypedOperation(operation, target, form);
  return state;
}
