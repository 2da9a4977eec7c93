"use client";

import { useState } from "react";
import { ActionForm, Select, SubmitButton, TextArea, TextInput } from "@/components/form";
import type { FormState } from "@/lib/dashboard/form-state";
import { fieldHint, fieldLabel, MULTILINE_FIELDS, NUMBER_FIELDS, PROVIDER_HINTS, PROVIDER_LABELS, SECRET_FIELDS, type ProviderFields } from "@/lib/dashboard/provider-fields";
import type { ProviderName } from "@/lib/iam/providers/types";

type Config = Record<string, string | number | boolean>;

/**
 * Configure a sign-in provider: the fields shown are the ones the chosen provider takes, filled
 * with its stored settings. Secrets are never filled in (the API shows only their last four
 * characters): left empty, the stored one stays.
 */
export function ProviderForm({
  action,
  providers,
  fields,
  configs,
  googleCallbackUrl,
}: {
  action: (state: FormState, form: FormData) => Promise<FormState>;
  providers: readonly ProviderName[];
  fields: ProviderFields;
  configs: Partial<Record<ProviderName, Config>>;
  googleCallbackUrl: string;
}) {
  const [provider, setProvider] = useState<ProviderName>(providers.find((p) => !configs[p]) ?? providers[0]!);
  const stored = configs[provider];
  const options = providers.map((p): [string, string] => [p, `${PROVIDER_LABELS[p]} (${p})${configs[p] ? ", configured" : ""}`]);
  return (
    <ActionForm
      action={action}
      success={(state) => (
        <p role="status" className="rounded-md bg-emerald-50 px-3 py-2 text-sm text-emerald-800">
          Saved {String(state.data?.provider)}: {state.data?.enabled ? "on" : "off"}.
        </p>
      )}
    >
      <Select
        label="Provider"
        name="provider"
        options={options}
        value={provider}
        onChange={(e) => setProvider(e.target.value as ProviderName)}
        hint={PROVIDER_HINTS[provider]}
      />
      {provider === "google" && (
        <p className="text-xs text-slate-600">
          For the browser sign-in flow, register this redirect URI with your Google OAuth client: <code className="break-all">{googleCallbackUrl}</code>
        </p>
      )}
      {/* Keyed by what is stored: after a save the fields start again from the new settings, and a typed secret is gone. */}
      <div key={`${provider}:${JSON.stringify(stored ?? {})}`} className="grid gap-4 sm:grid-cols-2">
        {fields[provider].map((name) => (
          <ConfigField key={name} provider={provider} name={name} stored={stored?.[name]} />
        ))}
      </div>
      <SubmitButton>{stored ? `Update ${PROVIDER_LABELS[provider]}` : `Configure ${PROVIDER_LABELS[provider]}`}</SubmitButton>
    </ActionForm>
  );
}

function ConfigField({ provider, name, stored }: { provider: ProviderName; name: string; stored: string | number | boolean | undefined }) {
  const label = fieldLabel(name);
  const hint = fieldHint(provider, name);
  if (SECRET_FIELDS.has(name)) {
    const placeholder = stored === undefined ? undefined : `${String(stored)} stored; leave empty to keep it`;
    if (MULTILINE_FIELDS.has(name)) return <TextArea label={label} name={name} hint={hint} rows={3} placeholder={placeholder} autoComplete="off" />;
    return <TextInput label={label} name={name} hint={hint} type="password" placeholder={placeholder} autoComplete="new-password" />;
  }
  const value = stored === undefined ? "" : String(stored);
  if (MULTILINE_FIELDS.has(name)) return <TextArea label={label} name={name} hint={hint} rows={4} defaultValue={value} />;
  if (NUMBER_FIELDS.has(name)) return <TextInput label={label} name={name} hint={hint} inputMode="numeric" defaultValue={value} />;
  return <TextInput label={label} name={name} hint={hint} defaultValue={value} />;
}
