"use client";

import { ActionForm, SubmitButton, TextInput } from "@/components/form";
import type { FormState } from "@/lib/dashboard/form-state";

/** The implementation address to point the project's beacon at, and what the upgrade sent. */
export function UpgradeForm({ action, chainId }: { action: (state: FormState, form: FormData) => Promise<FormState>; chainId: number }) {
  return (
    <ActionForm
      action={action}
      className="flex flex-col gap-3"
      success={(state) => (
        <p role="status" className="rounded-md bg-emerald-50 px-3 py-2 text-sm text-emerald-900">
          {state.data?.transactionHash ? (
            <>
              Upgraded: every managed account on chain {chainId} now runs <code className="text-xs">{String(state.data.implementation)}</code> (transaction{" "}
              <code data-testid="upgrade-transaction" className="break-all text-xs">{String(state.data.transactionHash)}</code>).
            </>
          ) : (
            <>The beacon already uses {String(state.data?.implementation)}; nothing was sent.</>
          )}
        </p>
      )}
    >
      <TextInput label="New implementation" name="implementation" required pattern="0x[0-9a-fA-F]{40}" placeholder="0x…" hint="A deployed account implementation for our EntryPoint (a SmartAccount upgrade), not an account's address." />
      <div>
        <SubmitButton variant="danger" confirm={`Upgrade every managed account of this project on chain ${chainId}? They run the new implementation from their next call on.`}>
          Upgrade all managed accounts
        </SubmitButton>
      </div>
    </ActionForm>
  );
}
