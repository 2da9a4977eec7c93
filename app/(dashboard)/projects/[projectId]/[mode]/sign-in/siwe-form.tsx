"use client";

import { ActionForm, SubmitButton, TextArea } from "@/components/form";
import type { FormState } from "@/lib/dashboard/form-state";
import type { SiweSettings } from "@/lib/iam/siwe-settings";

/** Where the mode's Sign-In with Ethereum messages may come from: domains and URIs, one a line. */
export function SiweSettingsForm({ action, settings }: { action: (state: FormState, form: FormData) => Promise<FormState>; settings: SiweSettings }) {
  const mode = settings.livemode ? "live" : "test";
  return (
    <ActionForm
      action={action}
      success={() => (
        <p role="status" className="rounded-md bg-emerald-50 px-3 py-2 text-sm text-emerald-800">
          Saved.
        </p>
      )}
    >
      <p className="text-sm text-slate-600" data-testid="siwe-allowed-domains">
        {settings.allowedDomains.length > 0 ? (
          <>
            Messages are accepted from{" "}
            {settings.allowedDomains.map((d, i) => (
              <span key={d}>
                {i > 0 && ", "}
                <code className="font-mono text-xs">{d}</code>
              </span>
            ))}
            {settings.domains.length === 0 && ` (test mode's defaults while no domain is set)`}.
          </>
        ) : (
          <>No domain is allowed yet: in {mode} mode every Sign-In with Ethereum message is refused until you add your game&apos;s domains.</>
        )}
      </p>
      {/* Keyed by what is stored, so the boxes show the saved lists after a save. */}
      <div key={JSON.stringify([settings.domains, settings.uris])} className="grid gap-4 sm:grid-cols-2">
        <TextArea
          label="Allowed domains"
          name="domains"
          rows={4}
          defaultValue={settings.domains.join("\n")}
          placeholder={"game.example\nlocalhost:3000\n*.preview.game.example"}
          hint="The domain line of the EIP-4361 message (the site that asks the wallet to sign): host (any port), host:port, or *.host for its subdomains. One a line; empty: the mode's defaults."
        />
        <TextArea
          label="Allowed URIs (optional)"
          name="uris"
          rows={4}
          defaultValue={settings.uris.join("\n")}
          placeholder={"https://game.example/login\nmygame://auth"}
          hint="The message's URI must start with one of these (at a /, ? or #). Empty: any http(s) URI on an allowed domain."
        />
      </div>
      <SubmitButton>Save Sign-In with Ethereum settings</SubmitButton>
    </ActionForm>
  );
}
