"use server";

import { headers } from "next/headers";
import { getDb } from "@/lib/db/client";
import { signInInput } from "@/lib/developers/schema";
import { checkCredentials, signInLockout } from "@/lib/developers/service";
import { clientAddress } from "@/lib/http/client-address";
import { ApiError } from "@/lib/errors";
import { enforce, limits } from "@/lib/http/rate-limit";
import type { FormState } from "./form-state";
import { issueSignInProof } from "./sign-in-proof";

/**
 * Checks the credentials before the page signs in through next-auth, so a wrong password is an
 * answer with a message rather than a failed request (and the lock-out is said as such); what the
 * page hands next-auth then is a proof of this check, not the password (./sign-in-proof.ts).
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
  if ((await signInLockout.lockedFor(db, email)) > 0) return { error: { message: "Too many wrong passwords for this email: try again in 15 minutes." } };
  const developer = await checkCredentials(db, email, password);
  if (!developer) {
    await signInLockout.recordFailure(db, email);
    return { error: { message: "Wrong email or password." } };
  }
  // next-auth's authorize takes this proof instead of the password: one sign-in, one hash.
  return { ok: true, data: { proof: await issueSignInProof(developer) } };
}
