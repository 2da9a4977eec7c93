"use server";

import { getDb } from "@/lib/db/client";
import { signUpInput } from "@/lib/developers/schema";
import { signUp } from "@/lib/developers/service";
import { ApiError } from "@/lib/http/errors";
import { validate } from "@/lib/http/validate";
import type { FormState } from "./form-state";

/** Creates the developer (with their organization and first project); the page then signs them in. */
export async function signUpAction(form: FormData): Promise<FormState> {
  try {
    const input = validate(signUpInput, {
      email: form.get("email") ?? undefined,
      password: form.get("password") ?? undefined,
      name: form.get("name") || undefined,
      organization: form.get("organization") || undefined,
    });
    await signUp(await getDb(), input);
    return { ok: true };
  } catch (err) {
    if (err instanceof ApiError) return { error: { message: err.message, details: err.details } };
    throw err;
  }
}
