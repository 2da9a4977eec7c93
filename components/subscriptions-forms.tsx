"use client";

import { useState } from "react";
import type { FormState } from "@/lib/dashboard/form-state";
import { Badge } from "./badge";
import { CopyButton } from "./code";
import { ActionForm, Select, SubmitButton, TextInput } from "./form";
import { buttonClass } from "./page";

type Action = (state: FormState, form: FormData) => Promise<FormState>;

interface NewTrigger {
  id: string;
  target: string;
  secret?: string;
}

/** A trigger's Standard Webhooks secret, which the API answers once: copy it now or roll a new trigger. */
function SecretsOnce({ triggers }: { triggers: NewTrigger[] }) {
  const shown = triggers.filter((t) => t.secret);
  if (!shown.length) return null;
  return (
    <div className="rounded-md border border-emerald-200 bg-emerald-50 p-3 text-sm text-emerald-900" data-testid="trigger-secrets">
      <p className="mb-2 font-medium">Signing secret{shown.length > 1 ? "s" : ""}: shown this once. Your receiver verifies the webhook-signature header with it.</p>
      <ul className="space-y-1">
        {shown.map((t) => (
          <li key={t.id} className="flex flex-wrap items-center gap-2">
            <span className="font-mono text-xs text-emerald-800">{t.target}</span>
            <code className="rounded bg-white px-1.5 py-0.5 font-mono text-xs" data-testid="trigger-secret">
              {t.secret}
            </code>
            <CopyButton value={t.secret!} />
          </li>
        ))}
      </ul>
    </div>
  );
}

/** New subscription: a topic and one or more webhook targets, each field named as the API's bracket notation. */
export function CreateSubscriptionForm({ action, topics }: { action: Action; topics: readonly string[] }) {
  const [targets, setTargets] = useState([0]);
  const [next, setNext] = useState(1);
  return (
    <ActionForm action={action} success={(state) => <SecretsOnce triggers={(state.data?.triggers as NewTrigger[] | undefined) ?? []} />}>
      <div className="grid gap-4 sm:grid-cols-[16rem_1fr]">
        <Select label="Topic" name="topic" options={[...topics]} defaultValue="transaction_intent.successful" />
        <div className="space-y-2">
          {targets.map((key, i) => (
            <div key={key} className="flex items-end gap-2">
              <div className="flex-1">
                <TextInput label={i === 0 ? "Target URL" : `Target URL ${i + 1}`} name={`triggers[${i}][target]`} type="url" required placeholder="https://example.com/webhooks/wallets" />
              </div>
              <input type="hidden" name={`triggers[${i}][type]`} value="webhook" />
              {targets.length > 1 && (
                <button type="button" className={buttonClass("secondary")} aria-label={`Remove target ${i + 1}`} onClick={() => setTargets(targets.filter((k) => k !== key))}>
                  Remove
                </button>
              )}
            </div>
          ))}
          {targets.length < 10 && (
            <button
              type="button"
              className="text-sm text-indigo-700 hover:underline"
              onClick={() => {
                setTargets([...targets, next]);
                setNext(next + 1);
              }}
            >
              + Add another target
            </button>
          )}
        </div>
      </div>
      <SubmitButton>Create subscription</SubmitButton>
    </ActionForm>
  );
}

/** Another webhook target for an existing subscription. */
export function AddTriggerForm({ action }: { action: Action }) {
  return (
    <ActionForm
      action={action}
      className="space-y-2"
      success={(state) => <SecretsOnce triggers={[{ id: String(state.data?.id), target: String(state.data?.target), secret: state.data?.secret as string | undefined }]} />}
    >
      <div className="flex flex-col gap-2 sm:flex-row sm:items-end">
        <div className="flex-1">
          <TextInput label="New target URL" name="target" type="url" required placeholder="https://example.com/webhooks/other" />
        </div>
        <input type="hidden" name="type" value="webhook" />
        <SubmitButton variant="secondary">Add target</SubmitButton>
      </div>
    </ActionForm>
  );
}

interface Attempt {
  id: string;
  trigger?: string | null;
  status: string;
  responseStatus: number | null;
  durationMs: number | null;
  error?: string | null;
  attempt?: number;
}

/** One attempt's outcome in a line: status, the receiver's HTTP status, how long it took. */
function AttemptLine({ attempt }: { attempt: Attempt }) {
  return (
    <li className="flex flex-wrap items-center gap-2 text-sm" data-testid="attempt-outcome">
      <Badge tone={attempt.status === "success" ? "green" : "red"}>{attempt.status}</Badge>
      <span>HTTP {attempt.responseStatus ?? "—"}</span>
      <span className="text-slate-500">{attempt.durationMs ?? "—"} ms</span>
      {attempt.trigger && <span className="font-mono text-xs text-slate-500">{attempt.trigger}</span>}
      {attempt.error && <span className="max-w-md truncate text-xs text-rose-700" title={attempt.error}>{attempt.error}</span>}
      <span className="font-mono text-xs text-slate-400">{attempt.id}</span>
    </li>
  );
}

/** "Send test event" to a subscription's triggers, or (`withUrl`) to a URL typed here; each receiver's answer is shown inline. */
export function SendTestForm({ action, withUrl = false }: { action: Action; withUrl?: boolean }) {
  return (
    <ActionForm
      action={action}
      className="space-y-2"
      success={(state) => {
        const deliveries = (state.data?.deliveries as Attempt[] | undefined) ?? [];
        return (
          <div className={`rounded-md p-2 ${state.data?.sent ? "bg-emerald-50" : "bg-rose-50"}`}>
            <p className="mb-1 text-sm font-medium">{state.data?.sent ? "Test event delivered" : "Test event not accepted"}</p>
            <ul className="space-y-1">
              {deliveries.map((d) => (
                <AttemptLine key={d.id} attempt={d} />
              ))}
            </ul>
          </div>
        );
      }}
    >
      {withUrl ? (
        <div className="flex flex-col gap-2 sm:flex-row sm:items-end">
          <div className="flex-1">
            <TextInput label="URL" name="target" type="url" required placeholder="https://example.com/webhooks/wallets" />
          </div>
          <SubmitButton variant="secondary">Send test event</SubmitButton>
        </div>
      ) : (
        <SubmitButton variant="secondary">Send test event</SubmitButton>
      )}
    </ActionForm>
  );
}

/** "Redeliver": the same event (body, webhook-id) once more to the same target, with the new attempt's outcome. */
export function RedeliverForm({ action }: { action: Action }) {
  return (
    <ActionForm
      action={action}
      className="space-y-1"
      success={(state) => (
        <ul>
          <AttemptLine attempt={state.data as unknown as Attempt} />
        </ul>
      )}
    >
      <SubmitButton variant="secondary">Redeliver</SubmitButton>
    </ActionForm>
  );
}
