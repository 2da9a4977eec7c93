"use server";

import { revalidatePath } from "next/cache";
import { getDb } from "@/lib/db/client";
import { createOAuthConfig, deleteOAuthConfig } from "@/lib/iam/provider-operations";
import { updateSiweSettingsOperation } from "@/lib/iam/siwe-operations";
import { rotateTokenKey } from "@/lib/iam/tokens";
import { projectScope } from "./context";
import type { FormState } from "./form-state";
import { submitTypedOperation } from "./operations";
import { NUMBER_FIELDS, SECRET_FIELDS } from "./provider-fields";

/** The project and mode a Player sign-in form acts in (checked against the developer on every call). */
export interface Scope {
  projectId: string;
  mode: string;
}

/**
 * Configure a provider (creates its configuration or updates it), with the API's own validation.
 * The form sends every field its provider takes: a filled one sets it, an empty secret keeps the
 * stored one (it is never shown, so it cannot be typed again), an empty setting clears it (the
 * API's "an empty value clears an optional one"); a number cannot be cleared, so an empty one keeps it.
 */
export async function configureProviderAction(scope: Scope, _state: FormState, form: FormData): Promise<FormState> {
  const input: Record<string, string> = {};
  for (const [name, value] of form.entries()) {
    if (typeof value !== "string" || name.startsWith("$")) continue;
    if (value !== "" || name === "provider") input[name] = value;
    else if (!SECRET_FIELDS.has(name) && !NUMBER_FIELDS.has(name)) input[name] = "";
  }
  return withoutResult(await submitTypedOperation(createOAuthConfig, scope, input));
}

/** On / Off: the stored configuration posted again with `enabled`, everything else kept. */
export async function setProviderEnabledAction(scope: Scope, provider: string, enabled: boolean, _state: FormState, _form: FormData): Promise<FormState> {
  return withoutResult(await submitTypedOperation(createOAuthConfig, scope, { provider, enabled }));
}

/** Remove a provider's configuration; its players keep their identities (and sign in again once it is configured again). */
export async function removeProviderAction(scope: Scope, provider: string, _state: FormState, _form: FormData): Promise<FormState> {
  return withoutResult(await submitTypedOperation(deleteOAuthConfig, { ...scope, params: { provider } }, {}));
}

/**
 * Sign-In with Ethereum's allowed domains and URIs, one a line; an empty box clears the list (the
 * mode's defaults). An entry the API refuses (`domains[2]`) is named on its box, by line.
 */
export async function configureSiweAction(scope: Scope, _state: FormState, form: FormData): Promise<FormState> {
  const lines = (name: string) =>
    String(form.get(name) ?? "")
      .split(/\r?\n/)
      .map((line) => line.trim())
      .filter(Boolean);
  const state = withoutResult(await submitTypedOperation(updateSiweSettingsOperation, scope, { domains: lines("domains"), uris: lines("uris") }));
  if (!state.error?.details) return state;
  const details: NonNullable<FormState["error"]>["details"] = {};
  for (const [name, detail] of Object.entries(state.error.details)) {
    const [, field, index] = /^(domains|uris)(?:\[(\d+)\])?$/.exec(name) ?? [];
    const key = field ?? name;
    const text = index === undefined ? detail.message : `Line ${Number(index) + 1} (${String(detail.value ?? "")}): ${detail.message}`;
    details[key] = { message: details[key] ? `${details[key].message}; ${text}` : text };
  }
  return { error: { message: state.error.message, details } };
}

/**
 * A new signing key for the mode's player tokens. New tokens are signed with it at once; the
 * retired key stays in the JWKS for a token's lifetime, so tokens it signed keep verifying.
 */
export async function rotateSigningKeyAction(scope: Scope, _state: FormState, _form: FormData): Promise<FormState> {
  const { ctx, base } = await projectScope(scope.projectId, scope.mode);
  const { kid } = await rotateTokenKey(await getDb(), ctx);
  revalidatePath(`${base}/sign-in`);
  return { ok: true, data: { kid } };
}

/** The browser gets the result once, as `data`. */
function withoutResult({ result: _result, ...state }: FormState & { result?: unknown }): FormState {
  return state;
}
