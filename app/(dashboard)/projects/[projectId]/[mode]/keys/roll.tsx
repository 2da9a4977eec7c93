"use client";

import { useRouter } from "next/navigation";
import { useState } from "react";
import { CopyButton } from "@/components/code";
import { buttonClass, ErrorMessage } from "@/components/page";
import type { FormState } from "@/lib/dashboard/form-state";
import { createSecretKeyAction, revokeSecretKeyAction, rollKeysAction } from "@/lib/dashboard/keys";

function useKeyAction() {
  const router = useRouter();
  const [result, setResult] = useState<FormState>({});
  const [pending, setPending] = useState(false);
  const run = async (confirmText: string | null, action: () => Promise<FormState>) => {
    if (confirmText && !window.confirm(confirmText)) return;
    setPending(true);
    setResult(await action());
    setPending(false);
    router.refresh();
  };
  return { result, pending, run };
}

function NewSecret({ result }: { result: FormState }) {
  if (result.error) return <ErrorMessage>{result.error.message}</ErrorMessage>;
  const secret = result.data?.secret;
  if (typeof secret !== "string") return null;
  return (
    <div role="status" className="rounded-md border border-emerald-300 bg-emerald-50 p-3 text-sm">
      <p className="font-medium text-emerald-900">New secret key — copy it now, it will not be shown again.</p>
      <p className="mt-2 flex flex-wrap items-center gap-2">
        <code data-testid="new-secret-key" className="break-all rounded bg-white px-2 py-1 font-mono text-xs">{secret}</code>
        <CopyButton value={secret} />
      </p>
    </div>
  );
}

export function KeyActions({ projectId, mode }: { projectId: string; mode: string }) {
  const { result, pending, run } = useKeyAction();
  return (
    <div className="space-y-3">
      <NewSecret result={result} />
      <div className="flex flex-wrap gap-2">
        <button type="button" disabled={pending} className={buttonClass()} onClick={() => run(null, () => createSecretKeyAction(projectId, mode))}>
          Create secret key
        </button>
        <button
          type="button"
          disabled={pending}
          className={buttonClass("danger")}
          onClick={() => run(`Roll the ${mode} keys? The current publishable and secret keys stop working at once.`, () => rollKeysAction(projectId, mode))}
        >
          Roll {mode} keys
        </button>
      </div>
    </div>
  );
}

export function RevokeKey({ projectId, mode, keyId, hint }: { projectId: string; mode: string; keyId: string; hint: string }) {
  const { result, pending, run } = useKeyAction();
  return (
    <span className="inline-flex items-center gap-2">
      {result.error && <span role="alert" className="text-xs text-rose-700">{result.error.message}</span>}
      <button
        type="button"
        disabled={pending}
        className="text-xs text-rose-700 hover:underline"
        onClick={() => run(`Revoke the secret key ${hint}? Requests with it fail at once.`, () => revokeSecretKeyAction(projectId, mode, keyId))}
      >
        Revoke
      </button>
    </span>
  );
}
