"use server";

import { revalidatePath } from "next/cache";
import { getDb } from "@/lib/db/client";
import { updateWebhook } from "@/lib/webhooks/operations";
import { rollWebhookSecret, sendTestEvent } from "@/lib/webhooks/service";
import { projectScope } from "./context";
import type { FormState } from "./form-state";
import { submitTypedOperation } from "./operations";

/** Sets the URL; the first set answers the new signing secret (`data.secret`), which the page shows once. */
export async function saveWebhookAction(projectId: string, mode: string, _state: FormState, form: FormData): Promise<FormState> {
  const { result: _result, ...state } = await submitTypedOperation(updateWebhook, { projectId, mode }, form);
  return state;
}

/** A new Standard Webhooks secret for the mode's webhook, answered this once; the old one stops verifying at once. */
export async function rollWebhookSecretAction(projectId: string, mode: string): Promise<FormState> {
  const scope = await projectScope(projectId, mode);
  const secret = await rollWebhookSecret(await getDb(), scope.ctx);
  revalidatePath(`${scope.base}/webhooks`);
  if (!secret) return { error: { message: "Set a webhook URL first." } };
  return { ok: true, data: { secret } };
}

export async function sendTestEventAction(projectId: string, mode: string): Promise<FormState> {
  const scope = await projectScope(projectId, mode);
  const attempt = await sendTestEvent(await getDb(), scope.ctx);
  revalidatePath(`${scope.base}/webhooks`);
  if (!attempt) return { error: { message: "Set a webhook URL first." } };
  if (attempt.status === "failed") return { error: { message: `The test event was not accepted: ${attempt.error}.` } };
  return { ok: true, data: { message: `Delivered: your endpoint answered ${attempt.responseStatus} in ${attempt.durationMs} ms.` } };
}
