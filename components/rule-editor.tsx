"use client";

import { useState } from "react";
import { formatEther, formatGwei } from "viem";
import type { FormState } from "@/lib/dashboard/form-state";
import { RULE_PURPOSES, purposeOf, type RuleLike, type RulePurposeId } from "@/lib/policies/purposes";
import { CopyButton } from "./code";
import { ActionForm, Select, SubmitButton, TextInput } from "./form";

export interface RuleContract {
  id: string;
  name: string;
  functions: string[];
}

const INTERVALS: [string, string][] = [
  ["minute", "minutes"],
  ["hour", "hours"],
  ["day", "days"],
  ["week", "weeks"],
  ["month", "months"],
];

const BUDGET_SCOPES: [string, string][] = [
  ["policy", "This whole policy"],
  ["player", "Each player (all of its accounts)"],
  ["account", "Each account"],
  ["operation", "Each operation"],
];

const BUDGET_PERIODS: [string, string][] = [
  ["day", "Every day (UTC)"],
  ["week", "Every week (UTC, from Monday)"],
  ["month", "Every calendar month (UTC)"],
  ["total", "Never: a total"],
];

/** The time-window fields: shown as UTC date-times, sent as Unix seconds. */
const INSTANTS = ["startsAt", "endsAt"] as const;

/** Unix seconds as a datetime-local value in UTC ("2025-01-31T18:00"). */
const utcInput = (seconds: number | null | undefined) => (seconds == null ? "" : new Date(seconds * 1000).toISOString().slice(0, 16));

/**
 * The form as the API takes it: a time window's UTC date-times become Unix seconds, sent as JSON so that an emptied
 * one is `null` (an edit then unsets it, where an empty field would keep it).
 */
export function ruleFormToApi(form: FormData): FormData {
  if (form.get("type") !== "time_window") return form;
  for (const name of INSTANTS) {
    const value = form.get(name);
    if (typeof value !== "string") continue;
    const ms = value === "" ? null : Date.parse(`${value}Z`);
    form.set(name, JSON.stringify(ms === null || Number.isNaN(ms) ? (value === "" ? null : value) : Math.floor(ms / 1000)));
    form.append("$json", name);
  }
  return form;
}

/** A wei amount typed so far, in the native coin: a hint beside the field (nothing while it is not a whole number). */
function inCoin(wei: string, symbol: string, unit: "coin" | "gwei" = "coin") {
  if (!/^\d{1,78}$/.test(wei)) return undefined;
  return unit === "gwei" ? `${formatGwei(BigInt(wei))} gwei` : `${formatEther(BigInt(wei))} ${symbol}`;
}

/** An approval webhook's signing secret, which the API answers once: copy it now, or rotate it later. */
function SecretOnce({ secret }: { secret: string }) {
  return (
    <div className="rounded-md border border-emerald-200 bg-emerald-50 p-3 text-sm text-emerald-900" data-testid="rule-secret">
      <p className="mb-2 font-medium">Signing secret: shown this once. Your server verifies the webhook-signature header of each request with it.</p>
      <div className="flex flex-wrap items-center gap-2">
        <code className="rounded bg-white px-1.5 py-0.5 font-mono text-xs">{secret}</code>
        <CopyButton value={secret} />
      </div>
    </div>
  );
}

/**
 * Adds a rule, or edits one (then its purpose is fixed: a different purpose is a different rule).
 * The purpose chosen in words decides the API's `type` and which fields are sent. A new rule's form
 * starts again once it is added; an approval webhook's secret stays shown above it.
 */
export function RuleEditor({
  action,
  contracts,
  rule,
  submitLabel,
  fields = {},
  symbol = "ETH",
}: {
  action: (state: FormState, form: FormData) => Promise<FormState>;
  contracts: RuleContract[];
  rule?: RuleLike;
  submitLabel: string;
  /** Hidden fields sent as they are (the policy a new rule belongs to). */
  fields?: Record<string, string>;
  /** The policy chain's native coin, for amounts in words. */
  symbol?: string;
}) {
  const [secret, setSecret] = useState<string | null>(null);
  const [round, setRound] = useState(0);
  const submit = async (state: FormState, form: FormData) => {
    const next = await action(state, ruleFormToApi(form));
    if (next.ok) {
      setSecret(typeof next.data?.secret === "string" ? next.data.secret : null);
      if (!rule) setRound((n) => n + 1); // a blank form for the next rule
    }
    return next;
  };
  return (
    <div className="space-y-4">
      {secret && <SecretOnce secret={secret} />}
      <RuleFields key={round} action={submit} contracts={contracts} rule={rule} submitLabel={submitLabel} fields={fields} symbol={symbol} />
    </div>
  );
}

function RuleFields({
  action,
  contracts,
  rule,
  submitLabel,
  fields,
  symbol,
}: {
  action: (state: FormState, form: FormData) => Promise<FormState>;
  contracts: RuleContract[];
  rule?: RuleLike;
  submitLabel: string;
  fields: Record<string, string>;
  symbol: string;
}) {
  const [purposeId, setPurposeId] = useState<RulePurposeId>(rule ? purposeOf(rule) : "contract_functions");
  const purpose = RULE_PURPOSES.find((p) => p.id === purposeId)!;
  const [contractId, setContractId] = useState(rule ? (rule.wildcard ? "" : (rule.contract?.id ?? "")) : (contracts[0]?.id ?? ""));
  const contract = contracts.find((c) => c.id === contractId);
  const [currency, setCurrency] = useState(rule?.currency ?? "native");
  const [scope, setScope] = useState(rule?.scope ?? "player");
  const [amount, setAmount] = useState(rule?.amount ?? "");
  const [maxFee, setMaxFee] = useState(rule?.maxFeePerGas ?? "");
  return (
    <ActionForm action={action}>
      {rule ? (
        <p className="text-sm font-medium text-slate-700">{purpose.label}</p>
      ) : (
        <Select
          label="What should this rule do?"
          name="$purpose"
          value={purposeId}
          onChange={(e) => setPurposeId(e.target.value as RulePurposeId)}
          options={RULE_PURPOSES.map((p) => [p.id, p.label])}
        />
      )}
      <p className="text-xs text-slate-600">{purpose.explanation}</p>
      {Object.entries(fields).map(([name, value]) => (
        <input key={name} type="hidden" name={name} value={value} />
      ))}
      <input type="hidden" name="type" value={purpose.type} />
      {purpose.type === "rate_limit" && <input type="hidden" name="functionName" value={purpose.id} />}
      {purposeId === "contract_functions" && (
        <div className="grid gap-4 sm:grid-cols-2">
          <input type="hidden" name="wildcard" value={contractId === "" ? "true" : "false"} />
          <Select
            label="Contract"
            name="contract"
            value={contractId}
            onChange={(e) => setContractId(e.target.value)}
            options={[...contracts.map((c): [string, string] => [c.id, c.name]), ["", "Any contract (wildcard)"]]}
          />
          {contract ? (
            <Select
              key={contract.id}
              label="Function"
              name="functionName"
              defaultValue={rule?.functionName ?? "All functions"}
              options={["All functions", ...new Set(contract.functions)]}
            />
          ) : (
            <TextInput label="Function" name="functionName" defaultValue={rule?.functionName ?? ""} placeholder="any function" hint="A function name to allow on every contract; empty allows any call." />
          )}
        </div>
      )}
      {(purposeId === "gas_per_transaction" || purposeId === "gas_per_interval") && (
        <TextInput label="Gas limit (wei)" name="gasLimit" inputMode="numeric" required defaultValue={rule?.gasLimit ?? ""} placeholder="10000000000000000" hint="In wei: 10000000000000000 is 0.01 of the native coin." />
      )}
      {purposeId === "count_per_interval" && <TextInput label="Transactions" name="countLimit" type="number" min={1} required defaultValue={rule?.countLimit ?? ""} />}
      {(purposeId === "gas_per_interval" || purposeId === "count_per_interval") && (
        <div className="grid gap-4 sm:grid-cols-2">
          <TextInput label="Every" name="timeIntervalValue" type="number" min={1} max={1000} required defaultValue={rule?.timeIntervalValue ?? 1} />
          <Select label="Period" name="timeIntervalType" defaultValue={rule?.timeIntervalType ?? "day"} options={INTERVALS} />
        </div>
      )}
      {purposeId === "budget" && (
        <div className="grid gap-4 sm:grid-cols-2">
          <Select label="Whose spending" name="scope" value={scope} onChange={(e) => setScope(e.target.value)} options={BUDGET_SCOPES} />
          <Select
            label="Currency"
            name="currency"
            value={currency}
            onChange={(e) => setCurrency(e.target.value)}
            options={[
              ["native", `${symbol} (in wei)`],
              ["usd", "US dollars"],
            ]}
            hint={currency === "usd" ? "Counted at the chain's USD price when each operation is sponsored." : undefined}
          />
          <TextInput
            label={currency === "usd" ? "Budget (USD)" : "Budget (wei)"}
            name="amount"
            inputMode="decimal"
            required
            value={amount}
            onChange={(e) => setAmount(e.target.value.trim())}
            placeholder={currency === "usd" ? "2.50" : "10000000000000000"}
            hint={currency === "usd" ? "Dollars, up to 6 decimals." : (inCoin(amount, symbol) ?? `In wei: 10000000000000000 is 0.01 ${symbol}.`)}
          />
          {scope !== "operation" && <Select label="Starts again" name="period" defaultValue={rule?.period ?? "day"} options={BUDGET_PERIODS} />}
        </div>
      )}
      {purposeId === "time_window" && (
        <div className="grid gap-4 sm:grid-cols-2">
          <TextInput label="Starts (UTC)" name="startsAt" type="datetime-local" defaultValue={utcInput(rule?.startsAt)} hint="Empty: already started." />
          <TextInput label="Ends (UTC)" name="endsAt" type="datetime-local" defaultValue={utcInput(rule?.endsAt)} hint="Empty: no end." />
        </div>
      )}
      {purposeId === "gas_price" && (
        <div className="grid gap-4 sm:grid-cols-2">
          <TextInput
            label="Highest fee per gas (wei)"
            name="maxFeePerGas"
            inputMode="numeric"
            required
            value={maxFee}
            onChange={(e) => setMaxFee(e.target.value.trim())}
            placeholder="30000000000"
            hint={inCoin(maxFee, symbol, "gwei") ?? "In wei: 30000000000 is 30 gwei."}
          />
          <TextInput
            label="Wait for cheaper gas (seconds)"
            name="waitSeconds"
            type="number"
            min={0}
            max={60}
            defaultValue={rule?.waitSeconds ?? 0}
            hint="Up to 60: how long a transaction this service builds waits for fees to fall under the ceiling before it is declined."
          />
        </div>
      )}
      {purposeId === "approval_webhook" && (
        <div className="grid gap-4 sm:grid-cols-2">
          <div className="sm:col-span-2">
            <TextInput label="Your approval URL" name="url" type="url" required defaultValue={rule?.url ?? ""} placeholder="https://example.com/sponsorship/approve" />
          </div>
          <TextInput label="Answer within (milliseconds)" name="timeoutMs" type="number" min={100} max={10000} defaultValue={rule?.timeoutMs ?? 2000} />
          <Select
            label="If it fails or is too slow"
            name="onError"
            defaultValue={rule?.onError ?? "decline"}
            options={[
              ["decline", "Decline"],
              ["sponsor", "Sponsor anyway"],
            ]}
          />
          {rule && (
            <Select
              label="Signing secret"
              name="rotateSecret"
              defaultValue="false"
              options={[
                ["false", "Keep the current one"],
                ["true", "Make a new one (the current one stops at once)"],
              ]}
            />
          )}
        </div>
      )}
      <SubmitButton>{submitLabel}</SubmitButton>
    </ActionForm>
  );
}
