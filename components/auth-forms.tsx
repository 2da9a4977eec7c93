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

export function SignInForm({ providers, initialError }: { providers: { id: string; name: string }[]; initialError?: string }) {
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
          const result = checked.ok ? await signInWithPassword(form) : null;
          if (result?.ok) return router.replace("/");
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
        <button key={p.id} type="button" className={`${buttonClass("secondary")} w-full py-2`} onClick={() => signIn(p.id, { callbackUrl: "/" })}>
          Continue with {p.name}
        </button>
      ))}
      <p className="text-center text-sm text-slate-600">
        New here? <Link href="/signup" className="font-medium text-indigo-700 hover:underline">Create an account</Link>
      </p>
    </div>
  );
}

export function SignUpForm() {
  const router = useRouter();
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
        <TextInput label="Email" name="email" type="email" autoComplete="email" required />
        <TextInput label="Password" name="password" type="password" autoComplete="new-password" required minLength={10} />
        <TextInput label="Organization" name="organization" placeholder="Your studio or company" />
      </FormFeedback>
      <button type="submit" disabled={pending} className={`${buttonClass()} w-full py-2`}>
        {pending ? "Creating…" : "Create account"}
      </button>
      <p className="text-center text-sm text-slate-600">
        Already have an account? <Link href="/login" className="font-medium text-indigo-700 hover:underline">Sign in</Link>
      </p>
    </form>
  );
}
