"use client";

import { useRouter } from "next/navigation";
import { useState, type ReactNode } from "react";
import { CopyButton } from "@/components/code";
import { ActionForm, SubmitButton, TextInput } from "@/components/form";
import { buttonClass } from "@/components/page";
import type { FormState } from "@/lib/dashboard/form-state";
import { rollWebhookSecretAction } from "@/lib/dashboard/webhooks";

/** The signing secret the API answers once (on the first URL set, or a roll): copy it now. */
function SecretOnce({ secret }: { secret: string }) {
  return (
    <div className="rounded-md border border-emerald-200 bg-emerald-50 p-3 text-sm text-emerald-900">
      <p className="mb-2 font-medium">Signing secret: shown this once. Your endpoint verifies the webhook-signature header with it.</p>
      <span className="flex flex-wrap items-center gap-2">
        <code className="rounded bg-white px-1.5 py-0.5 font-mono text-xs" data-testid="webhook-secret">
          {secret}
        </code>
        <CopyButton value={secret} />
      </span>
    </div>
  );
}

type Action = (state: FormState, form: FormData) => Promise<FormState>;

/**
 * The endpoint's URL form and its signing secret: the first save and each roll answer a new
 * secret, shown once (the latest only: a rolled secret replaces the one before at once).
 * `children`: the endpoint's other actions, shown once a URL is set.
 */
export function WebhookEndpoint({ save, url, projectId, mode, children }: { save: Action; url: string | null; projectId: string; mode: string; children: ReactNode }) {
  const router = useRouter();
  const [secret, setSecret] = useState<string | null>(null);
  const [rolled, setRolled] = useState<FormState>({});
  const [rolling, setRolling] = useState(false);
  const saveAndShow: Action = async (state, form) => {
    const answer = await save(state, form);
    if (typeof answer.data?.secret === "string") setSecret(answer.data.secret);
    return answer;
  };
  return (
    <div className="space-y-3">
      {secret && <SecretOnce secret={secret} />}
      <ActionForm action={saveAndShow} className="flex flex-col gap-3 sm:flex-row sm:items-end">
        <div className="flex-1">
          <TextInput key={url ?? ""} label="URL" name="url" type="url" required defaultValue={url ?? ""} placeholder="https://example.com/webhooks/wallets" />
        </div>
        <div className="sm:pb-0.5">
          <SubmitButton>{url ? "Update" : "Save"}</SubmitButton>
        </div>
      </ActionForm>
      {url && (
        <div className="mt-4 flex flex-wrap items-center gap-3 border-t border-slate-100 pt-4">
          <button
            type="button"
            disabled={rolling}
            className={buttonClass("secondary")}
            onClick={async () => {
              if (!window.confirm("Make a new signing secret? The current one stops verifying at once.")) return;
              setRolling(true);
              const answer = await rollWebhookSecretAction(projectId, mode);
              setRolled(answer);
              if (typeof answer.data?.secret === "string") setSecret(answer.data.secret);
              setRolling(false);
              router.refresh();
            }}
          >
            {rolling ? "Rolling…" : "Roll signing secret"}
          </button>
          {rolled.error && <span role="alert" className="text-sm text-rose-700">{rolled.error.message}</span>}
          {children}
        </div>
      )}
    </div>
  );
}
