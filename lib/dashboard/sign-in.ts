"use server";

import { headers } from "next/headers";
import { getDb } from "@/lib/db/client";
import { isLockedOut, recordSignIn } from "@/lib/developers/lockout";
import { signInInput } from "@/lib/developers/schema";
import { checkCredentials } from "@/lib/developers/service";
import { clientAddress } from "@/lib/http/client-address";
import { ApiError } from "@/lib/http/errors";
import { enforce, limits } from "@/lib/http/rate-limit";
import type { FormState } from "./form-state";

/**
 * Checks the credentials before the page hands them to next-auth, so a wrong password is an
 * answer with a message rather than a failed request (and the lock-out is said as such).
 * Attempts are limited per client address too, so guessing across many emails is slow as well.
 */
export async function checkSignIn(form: FormData): Promise<FormState> {
  const parsed = signInInput.safeParse({ email: form.get("email") ?? "", password: form.get("password") ?? "" });
  if (!parsed.success) return { error: { message: "Enter your email and password." } };
  const { email, password } = parsed.data;
  const db = await getDb();
  try {
    await enforce(db, `auth:check:${clientAddress(await headers())}`, limits.auth(), "Too many sign-in attempts from your address");
  } catch (err) {
    if (err instanceof ApiError) return { error: { message: err.message } };
    throw err;
  }
  if (await isLockedOut(db, email)) return { error: { message: "Too many wrong passwords for this email: try again in 15 minutes." } };
  const developer = await checkCredentials(db, email, password);
  if (!developer) {
    await recordSignIn(db, email, false);
    return { error: { message: "Wrong email or password." } };
  }
  return { ok: true };
}
