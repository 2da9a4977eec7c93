"use client";

import { startTransition, useActionState, useState } from "react";
import type { FormState } from "@/lib/dashboard/form-state";
import type { PolicyEvaluation } from "@/lib/policy-actions/dry-run";
import { Badge } from "./badge";
import { FormFeedback, PlayerField, Select, SubmitButton, TextInput } from "./form";
import type { IntentFormContract } from "./intent-form";
import { coins, dollars, inUnit, type AmountUnit } from "./sponsorship-amounts";
import { Table } from "./table";
import { Time } from "./time";

/** A rule of the policy as the checks name it: its sentence, and the unit of what remains of it. */
export interface DryRunRule {
  words: string;
  unit: AmountUnit;
}

/** Checks that are the policy's own rather than a rule's, in words. */
const CHECK_WORDS: Record<string, string> = {
  policy: "The policy is enabled",
  calls: "Every call is allowed by a rule",
  max_cost: "The most one operation may cost (SPONSOR_MAX_COST_WEI)",
  balance: "The project's sponsorship balance covers it",
};

const RAW = "$raw";

/**
 * The policy page's dry run: what an intent would send (a player or account, and a call as the intent form takes it)
 * evaluated by the policy without holding or signing anything; the answer lists each check and the decision.
 */
export function DryRunForm({
  action,
  chainId,
  symbol,
  contracts,
  players,
  rules,
  asksWebhooks,
}: {
  action: (state: FormState, form: FormData) => Promise<FormState>;
  chainId: number;
  symbol: string;
  contracts: IntentFormContract[];
  players: { id: string; name: string }[];
  rules: Record<string, DryRunRule>;
  asksWebhooks: boolean;
}) {
  const [state, formAction, pending] = useActionState(action, {});
  const callable = contracts.filter((c) => c.chainId === chainId && c.writable.length > 0);
  const [target, setTarget] = useState(callable[0]?.id ?? RAW);
  const [fnIndex, setFnIndex] = useState(0);
  const contract = callable.find((c) => c.id === target);
  const fn = contract ? contract.writable[Math.min(fnIndex, contract.writable.length - 1)] : undefined;
  return (
    <div>
      <form
        className="space-y-4"
        aria-label="Dry run"
        // As ActionForm: submitted by hand, so the fields keep what was typed for the next run.
        onSubmit={(e) => {
          e.preventDefault();
          const data = new FormData(e.currentTarget);
          startTransition(() => formAction(data));
        }}
      >
        <FormFeedback error={state.error} pending={pending}>
          <div className="grid gap-4 sm:grid-cols-2">
            <PlayerField id="dry-run-player" players={players} hint="Its account on this chain sends the call." />
            <TextInput label="Or an account" name="account" placeholder="acc_… or dac_…" className="block w-full rounded-md border border-slate-300 bg-white px-3 py-1.5 font-mono text-sm shadow-sm" />
            <Select
              label="Call"
              name="$target"
              value={target}
              onChange={(e) => {
                setTarget(e.target.value);
                setFnIndex(0);
              }}
              options={[...callable.map((c): [string, string] => [c.id, c.name]), [RAW, "Any address (to and data)"]]}
            />
            {contract && fn && (
              <Select label="Function to call" name="$function" value={String(fnIndex)} onChange={(e) => setFnIndex(Number(e.target.value))} options={contract.writable.map((f, i): [string, string] => [String(i), f.signature])} />
            )}
          </div>
          <input type="hidden" name="chainId" value={chainId} />
          {contract && fn ? (
            <>
              <input type="hidden" name="interactions[0][contract]" value={contract.id} />
              <input type="hidden" name="interactions[0][functionName]" value={fn.name} />
              {fn.inputs.map((input, i) => (
                <TextInput
                  key={`${contract.id}-${fn.signature}-${i}`}
                  label={`${input.name || `argument ${i + 1}`} (${input.type})`}
                  name={`interactions[0][functionArgs][${i}]`}
                  required
                  hint={input.type.endsWith("]") || input.type.startsWith("tuple") ? "JSON, e.g. [1, 2]" : undefined}
                />
              ))}
            </>
          ) : (
            <div className="grid gap-4 sm:grid-cols-2">
              <TextInput label="To" name="interactions[0][to]" required placeholder="0x…" />
              <TextInput label="Data" name="interactions[0][data]" placeholder="0x" />
            </div>
          )}
          <TextInput label="Value (wei)" name="interactions[0][value]" inputMode="numeric" placeholder="0" />
          {asksWebhooks && (
            <label className="flex items-center gap-2 text-sm">
              <input type="checkbox" name="callWebhook" value="true" />
              Ask the approval webhooks too (each call is in the delivery log); otherwise they are listed as not asked
            </label>
          )}
          <SubmitButton>Run dry run</SubmitButton>
        </FormFeedback>
      </form>
      {state.ok && state.data && <Evaluation result={state.data as PolicyEvaluation} symbol={symbol} rules={rules} />}
    </div>
  );
}

type Check = PolicyEvaluation["checks"][number];

function Passed({ check }: { check: Check }) {
  if (check.passed === null) return <Badge tone="gray">not asked</Badge>;
  return check.passed ? <Badge tone="green">passed</Badge> : <Badge tone="red">failed</Badge>;
}

/** The decision, what the operation may cost, and every check with its reason. */
export function Evaluation({ result, symbol, rules }: { result: PolicyEvaluation; symbol: string; rules: Record<string, DryRunRule> }) {
  const sponsor = result.decision === "sponsor";
  return (
    <section aria-label="Dry run result" data-testid="dry-run-result" className="mt-5 space-y-3 border-t border-slate-100 pt-4">
      <p className="flex flex-wrap items-center gap-2 text-sm">
        <span className="font-medium">Decision:</span>
        <Badge tone={sponsor ? "green" : "red"}>
          <span data-testid="dry-run-decision">{sponsor ? "sponsor" : "decline"}</span>
        </Badge>
        {result.code && <code className="text-xs">{result.code}</code>}
        <span className="text-slate-600">
          The operation may cost up to <span title={`${result.maxCost} wei`}>{coins(result.maxCost, symbol)}</span>
          {result.maxCostUsd !== null && ` (${dollars(result.maxCostUsd)})`}.
        </span>
      </p>
      <Table<Check & { index: number }>
        rows={result.checks.map((c, index) => ({ ...c, index }))}
        rowKey={(c) => String(c.index)}
        columns={[
          {
            header: "Check",
            cell: (c) => (
              <div className="whitespace-normal">
                <span>{c.rule ? (rules[c.rule]?.words ?? c.rule) : (CHECK_WORDS[c.type] ?? c.type)}</span>
                <span className="block font-mono text-xs text-slate-500">
                  {c.type}
                  {c.rule && ` · ${c.rule}`}
                </span>
              </div>
            ),
            className: "min-w-56",
          },
          { header: "Passed", cell: (c) => <Passed check={c} /> },
          { header: "Reason", cell: (c) => <span className="whitespace-normal text-xs">{c.reason}</span>, className: "min-w-72" },
          {
            header: "Remaining",
            cell: (c) => (c.remaining === null ? <span className="text-slate-400">—</span> : inUnit(c.remaining, (c.rule && rules[c.rule]?.unit) || "wei", symbol)),
          },
          { header: "Resets at", cell: (c) => <Time seconds={c.resetsAt} /> },
        ]}
      />
    </section>
  );
}
