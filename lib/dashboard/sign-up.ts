"use server";

import { headers } from "next/headers";
import { getDb } from "@/lib/db/client";
import { signUpInput } from "@/lib/developers/schema";
import { signUp } from "@/lib/developers/service";
import { clientAddress } from "@/lib/http/client-address";
import { ApiError } from "@/lib/errors";
import { enforce, limits } from "@/lib/http/rate-limit";
import { validate } from "@/lib/http/validate";
import type { FormState } from "./form-state";

const tokenField = (value: FormDataEntryValue | null) => (typeof value === "string" && value ? value.slice(0, 100) : undefined);

/**
 * Creates the developer (with their organization and first project, or into the organization of
 * the invitation, or claiming the project of the claim link); the page then signs them in.
 */
export async function signUpAction(form: FormData): Promise<FormState> {
  try {
    const db = await getDb();
    await enforce(db, `auth:sign-up:${clientAddress(await headers())}`, limits.auth(), "Too many sign-ups from your address");
    const input = validate(signUpInput, {
      email: form.get("email") ?? undefined,
      password: form.get("password") ?? undefined,
      name: form.get("name") || undefined,
      organization: form.get("organization") || undefined,
    });
    await signUp(db, input, { invite: tokenField(form.get("invite")), claim: tokenField(form.get("claim")) });
    return { ok: true };
  } catch (err) {
    if (err instanceof ApiError) return { error: { message: err.message, details: err.details } };
    throw err;
  }
}
