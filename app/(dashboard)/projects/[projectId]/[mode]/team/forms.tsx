"use client";

import { CopyButton } from "@/components/code";
import { ActionForm, SubmitButton, TextInput } from "@/components/form";
import { inviteAction, revokeInviteAction } from "@/lib/dashboard/access";

/** The owner's invitation form; the new link is shown once, to be sent to the invited developer. */
export function InviteForm({ projectId, mode }: { projectId: string; mode: string }) {
  return (
    <ActionForm
      action={(_, form) => inviteAction(projectId, mode, form)}
      success={(state) => (
        <div role="status" className="rounded-md border border-emerald-300 bg-emerald-50 p-3 text-sm">
          <p className="font-medium text-emerald-900">Invitation for {String(state.data?.email)} — send this link; it is shown only now and works once, for 7 days.</p>
          <p className="mt-2 flex flex-wrap items-center gap-2">
            <code data-testid="invite-link" className="break-all rounded bg-white px-2 py-1 font-mono text-xs">{String(state.data?.link)}</code>
            <CopyButton value={String(state.data?.link)} />
          </p>
        </div>
      )}
    >
      <TextInput label="Email to invite" name="email" type="email" required />
      <SubmitButton>Create invitation</SubmitButton>
    </ActionForm>
  );
}

export function RevokeInvite({ projectId, mode, inviteId, email }: { projectId: string; mode: string; inviteId: string; email: string }) {
  return (
    <ActionForm action={() => revokeInviteAction(projectId, mode, inviteId)} className="inline">
      <SubmitButton variant="secondary" confirm={`Revoke the invitation for ${email}?`}>
        Revoke
      </SubmitButton>
    </ActionForm>
  );
}
