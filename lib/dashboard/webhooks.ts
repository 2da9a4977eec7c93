"use server";

import { revalidatePath } from "next/cache";
import { getDb } from "@/lib/db/client";
import { sendTestEvent } from "@/lib/webhooks/service";
import { projectScope } from "./context";
import type { FormState } from "./form-state";

export async function sendTestEventAction(projectId: string, mode: string): Promise<FormState> {
  const scope = await projectScope(projectId, mode);
  const attempt = await sendTestEvent(await getDb(), scope.ctx);
  revalidatePath(`${scope.base}/webhooks`);
  if (!attempt) return { error: { message: "Set a webhook URL first." } };
  if (attempt.status === "failed") return { error: { message: `The test event was not accepted: ${attempt.error}.` } };
  return { ok: true, data: { message: `Delivered: your endpoint answered ${attempt.responseStatus} in ${attempt.durationMs} ms.` } };
}
