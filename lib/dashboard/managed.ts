"use server";

import { revalidatePath } from "next/cache";
import { upgradeManagedAccounts } from "@/lib/accounts/managed";
import { ApiError } from "@/lib/errors";
import { projectScope } from "./context";
import type { FormState } from "./form-state";

/** The dashboard's "Upgrade" of the project's managed accounts on one chain: the function the CLI calls. */
export async function upgradeManagedAction(target: { projectId: string; mode: string; chainId: number }, _state: FormState, form: FormData): Promise<FormState> {
  const scope = await projectScope(target.projectId, target.mode);
  try {
    const result = await upgradeManagedAccounts(scope.ctx, Number(target.chainId), String(form.get("implementation") ?? "").trim());
    revalidatePath(`${scope.base}/accounts/managed`);
    return { ok: true, data: { ...result } };
  } catch (err) {
    if (err instanceof ApiError) return { error: { message: err.message, details: err.details } };
    throw err;
  }
}
