"use client";

import { useState } from "react";
import { ActionForm, Select, SubmitButton, TextInput } from "@/components/form";
import type { FormFunction } from "@/lib/dashboard/contracts";
import type { FormState } from "@/lib/dashboard/form-state";

/** Picks a view function, asks for its arguments and shows what the chain answers. */
export function ReadContractForm({ action, functions }: { action: (state: FormState, form: FormData) => Promise<FormState>; functions: FormFunction[] }) {
  const [selected, setSelected] = useState(0);
  const fn = functions[selected]!;
  return (
    <ActionForm
      action={action}
      success={(state) => (
        <div role="status" className="rounded-md bg-slate-50 p-3">
          <p className="text-xs font-medium text-slate-500">{String(state.data?.functionName)} returned</p>
          <pre data-testid="read-result" className="mt-1 overflow-x-auto font-mono text-xs">{JSON.stringify(state.data?.result, null, 2)}</pre>
        </div>
      )}
    >
      <Select label="Function" name="$fn" value={String(selected)} onChange={(e) => setSelected(Number(e.target.value))} options={functions.map((f, i) => [String(i), f.signature])} />
      <input type="hidden" name="functionName" value={fn.name} />
      {fn.inputs.map((input, i) => (
        <TextInput key={`${fn.signature}-${i}`} label={`${input.name || `argument ${i + 1}`} (${input.type})`} name={`functionArgs[${i}]`} required />
      ))}
      <SubmitButton variant="secondary">Read</SubmitButton>
    </ActionForm>
  );
}
