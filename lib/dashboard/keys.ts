"use server";

import { revalidatePath } from "next/cache";
import { getDb } from "@/lib/db/client";
import { ApiError } from "@/lib/errors";
import { createSecretKey, revokeSecretKey, rollKeys } from "@/lib/projects/service";
import { projectScope } from "./context";
import type { FormState } from "./form-state";

/** Revokes the mode's keys and answers the new ones: the only time the new secret key is shown. */
export async function rollKeysAction(projectId: string, mode: string): Promise<FormState> {
  const scope = await projectScope(projectId, mode);
  const keys = await rollKeys(await getDb(), scope.project.id, scope.mode);
  revalidatePath(scope.base, "layout");
  return { ok: true, data: { secret: keys?.secret } };
}

export async function createSecretKeyAction(projectId: string, mode: string): Promise<FormState> {
  const scope = await projectScope(projectId, mode);
  try {
    const secret = await createSecretKey(await getDb(), scope.ctx);
    revalidatePath(scope.base, "layout");
    return { ok: true, data: { secret } };
  } catch (err) {
    if (err instanceof ApiError) return { error: { message: err.message } }; // the cap on active keys
    throw err;
  }
}

export async function revokeSecretKeyAction(projectId: string, mode: string, keyId: string): Promise<FormState> {
  const scope = await projectScope(projectId, mode);
  const revoked = await revokeSecretKey(await getDb(), scope.ctx, keyId);
  revalidatePath(scope.base, "layout");
  return revoked ? { ok: true } : { error: { message: "The last secret key cannot be revoked; roll the keys instead." } };
}
