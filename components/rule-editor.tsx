"use client";

import { useState } from "react";
import type { FormState } from "@/lib/dashboard/form-state";
import { RULE_PURPOSES, purposeOf, type RuleLike, type RulePurposeId } from "@/lib/policies/purposes";
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

/**
 * Adds a rule, or edits one (then its purpose is fixed: a different purpose is a different rule).
 * The purpose chosen in words decides the API's `type` and which fields are sent.
 */
export function RuleEditor({
  action,
  contracts,
  rule,
  submitLabel,
  fields = {},
}: {
  action: (state: FormState, form: FormData) => Promise<FormState>;
  contracts: RuleContract[];
  rule?: RuleLike;
  submitLabel: string;
  /** Hidden fields sent as they are (the policy a new rule belongs to). */
  fields?: Record<string, string>;
}) {
  const [purposeId, setPurposeId] = useState<RulePurposeId>(rule ? purposeOf(rule) : "contract_functions");
  const purpose = RULE_PURPOSES.find((p) => p.id === purposeId)!;
  const [contractId, setContractId] = useState(rule ? (rule.wildcard ? "" : (rule.contract?.id ?? "")) : (contracts[0]?.id ?? ""));
  const contract = contracts.find((c) => c.id === contractId);
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
      <SubmitButton>{submitLabel}</SubmitButton>
    </ActionForm>
  );
}
