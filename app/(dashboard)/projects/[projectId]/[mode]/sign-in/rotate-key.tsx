"use client";

import type { ReactNode } from "react";
import { ActionForm, SubmitButton } from "@/components/form";
import type { FormState } from "@/lib/dashboard/form-state";

/** "Rotate signing key", confirmed first, with the new key id once done. */
export function RotateKeyForm({ action, confirm, children }: { action: (state: FormState, form: FormData) => Promise<FormState>; confirm: string; children: ReactNode }) {
  return (
    <ActionForm
      action={action}
      className="space-y-2"
      success={(state) => (
        <p role="status" className="text-sm text-emerald-800">
          New signing key <code className="font-mono text-xs">{String(state.data?.kid)}</code>. Tokens signed before keep verifying until they expire.
        </p>
      )}
    >
      {children}
      <SubmitButton variant="danger" confirm={confirm}>
        Rotate signing key
      </SubmitButton>
    </ActionForm>
  );
}
