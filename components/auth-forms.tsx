"use client";

import Link from "next/link";
import { useRouter } from "next/navigation";
import { signIn } from "next-auth/react";
import { useState } from "react";
import type { FormState } from "@/lib/dashboard/form-state";
import { checkSignIn } from "@/lib/dashboard/sign-in";
import { signUpAction } from "@/lib/dashboard/sign-up";
import { buttonClass } from "./page";

const inputClass = "block w-full rounded-md border border-slate-300 px-3 py-2 text-sm shadow-sm focus:border-indigo-500 focus:outline-none focus:ring-1 focus:ring-indigo-500";

function Input({ label, error, ...props }: React.InputHTMLAttributes<HTMLInputElement> & { label: string; error?: string }) {
  return (
    <label className="block text-sm">
      <span className="mb-1 block font-medium text-slate-700">{label}</span>
      <input className={inputClass} {...props} />
      {error && <span className="mt-1 block text-xs text-rose-700">{error}</span>}
    </label>
  );
}

export function SignInForm({ providers, initialError }: { providers: { id: string; name: string }[]; initialError?: string }) {
  const router = useRouter();
  const [error, setError] = useState(initialError);
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
          const result = checked.ok ? await signIn("credentials", { email: form.get("email"), password: form.get("password"), redirect: false }) : null;
          if (result?.ok) return router.replace("/");
          setPending(false);
          setError(checked.error?.message ?? "Could not sign you in. Try again.");
        }}
      >
        {error && <p role="alert" className="rounded-md bg-rose-50 px-3 py-2 text-sm text-rose-800">{error}</p>}
        <Input label="Email" name="email" type="email" autoComplete="email" required />
        <Input label="Password" name="password" type="password" autoComplete="current-password" required />
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
  const fieldError = (name: string) => state.error?.details?.[name]?.message;
  return (
    <form
      className="space-y-4"
      onSubmit={async (e) => {
        e.preventDefault();
        setPending(true);
        const form = new FormData(e.currentTarget);
        const created = await signUpAction(form);
        if (created.ok) {
          const result = await signIn("credentials", { email: form.get("email"), password: form.get("password"), redirect: false });
          if (result?.ok) return router.replace("/");
        }
        setState(created);
        setPending(false);
      }}
    >
      {state.error && <p role="alert" className="rounded-md bg-rose-50 px-3 py-2 text-sm text-rose-800">{state.error.message}</p>}
      <Input label="Your name" name="name" autoComplete="name" error={fieldError("name")} />
      <Input label="Email" name="email" type="email" autoComplete="email" required error={fieldError("email")} />
      <Input label="Password" name="password" type="password" autoComplete="new-password" required minLength={10} error={fieldError("password")} />
      <Input label="Organization" name="organization" placeholder="Your studio or company" error={fieldError("organization")} />
      <button type="submit" disabled={pending} className={`${buttonClass()} w-full py-2`}>
        {pending ? "Creating…" : "Create account"}
      </button>
      <p className="text-center text-sm text-slate-600">
        Already have an account? <Link href="/login" className="font-medium text-indigo-700 hover:underline">Sign in</Link>
      </p>
    </form>
  );
}
