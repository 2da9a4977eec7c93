"use client";

import Link from "next/link";
import { useRouter } from "next/navigation";
import { signIn } from "next-auth/react";
import { useState } from "react";
import type { FormState } from "@/lib/dashboard/form-state";
import { checkSignIn } from "@/lib/dashboard/sign-in";
import { signUpAction } from "@/lib/dashboard/sign-up";
import { FormFeedback, TextInput } from "./form";
import { buttonClass } from "./page";

/** Signs in with the form's email and password, staying on the page so a refusal can be shown there. */
const signInWithPassword = (form: FormData) => signIn("credentials", { email: form.get("email"), password: form.get("password"), redirect: false });
/** Signs in with the proof checkSignIn gave for the form's password: the server hashes the password once per sign-in. */
const signInWithProof = (form: FormData, proof: unknown) => signIn("credentials", { email: form.get("email"), proof: String(proof), redirect: false });

/** Where to go after signing in: a path of this site only (a claim or invitation link), else the dashboard. */
const safeNext = (next?: string) => (next && next.startsWith("/") && !next.startsWith("//") && !next.startsWith("/\\") ? next : "/");

export function SignInForm({ providers, initialError, next }: { providers: { id: string; name: string }[]; initialError?: string; next?: string }) {
  const router = useRouter();
  const [error, setError] = useState<FormState["error"]>(initialError ? { message: initialError } : undefined);
  const [pending, setPending] = useState(false);
  return (
    <div className="space-y-4">
      <form
        className="space-y-4"
        onSubmit={async (e) => {
          e.preventDefault();
          setPending(true);
          const form = new FormData(e.currentTarget);
          const checked = await checkSignIn(form);
          const result = checked.ok ? await signInWithProof(form, checked.data?.proof) : null;
          if (result?.ok) return router.replace(safeNext(next));
          setPending(false);
          setError(checked.error ?? { message: "Could not sign you in. Try again." });
        }}
      >
        <FormFeedback error={error} pending={pending}>
          <TextInput label="Email" name="email" type="email" autoComplete="email" required />
          <TextInput label="Password" name="password" type="password" autoComplete="current-password" required />
        </FormFeedback>
        <button type="submit" disabled={pending} className={`${buttonClass()} w-full py-2`}>
          {pending ? "Signing in…" : "Sign in"}
        </button>
      </form>
      {providers.map((p) => (
        <button key={p.id} type="button" className={`${buttonClass("secondary")} w-full py-2`} onClick={() => signIn(p.id, { callbackUrl: safeNext(next) })}>
          Continue with {p.name}
        </button>
      ))}
      <p className="text-center text-sm text-slate-600">
        New here? <Link href="/signup" className="font-medium text-indigo-700 hover:underline">Create an account</Link>
      </p>
    </div>
  );
}

/**
 * Sign-up; through a claim link it also takes the printed project, through an invitation it joins
 * the inviting organization (with the invited email).
 */
export function SignUpForm({ claim, invite }: { claim?: string; invite?: { token: string; email: string } } = {}) {
  const router = useRouter();
  const back = claim ? `/claim/${claim}` : invite ? `/invite/${invite.token}` : null;
  const signInHref = back ? `/login?next=${encodeURIComponent(back)}` : "/login";
  const [state, setState] = useState<FormState>({});
  const [pending, setPending] = useState(false);
  return (
    <form
      className="space-y-4"
      onSubmit={async (e) => {
        e.preventDefault();
        setPending(true);
        const form = new FormData(e.currentTarget);
        const created = await signUpAction(form);
        if (created.ok) {
          const result = await signInWithPassword(form);
          if (result?.ok) return router.replace("/");
        }
        setState(created);
        setPending(false);
      }}
    >
      <FormFeedback error={state.error} pending={pending}>
        <TextInput label="Your name" name="name" autoComplete="name" />
        {claim && <input type="hidden" name="claim" value={claim} />}
        {invite && <input type="hidden" name="invite" value={invite.token} />}
        <TextInput label="Email" name="email" type="email" autoComplete="email" required defaultValue={invite?.email} readOnly={Boolean(invite)} />
        <TextInput label="Password" name="password" type="password" autoComplete="new-password" required minLength={10} />
        {!invite && <TextInput label="Organization" name="organization" placeholder="Your studio or company" />}
      </FormFeedback>
      <button type="submit" disabled={pending} className={`${buttonClass()} w-full py-2`}>
        {pending ? "Creating…" : "Create account"}
      </button>
      <p className="text-center text-sm text-slate-600">
        Already have an account? <Link href={signInHref} className="font-medium text-indigo-700 hover:underline">Sign in</Link>
      </p>
    </form>
  );
}
