"use client";

import { useState } from "react";
import { ActionForm, Select, SubmitButton, TextArea, TextInput } from "@/components/form";
import type { FormState } from "@/lib/dashboard/form-state";

type Options = [string, string][];

const HINTS: Record<string, string> = {
  "balance.contract": "Watches a view function of a registered contract that returns one integer (an ERC-20 balanceOf, say).",
  "balance.dev_account": "Watches a developer account's native balance on a chain.",
  "balance.project": "Watches this project's available sponsorship balance on a chain, or on every chain of this mode (each chain fires on its own).",
};

/** The create form: the fields shown are the ones the chosen topic takes, so the API never sees a field its topic refuses. */
export function CreateEventForm({
  action,
  topics,
  contracts,
  developerAccounts,
  chains,
}: {
  action: (state: FormState, form: FormData) => Promise<FormState>;
  topics: readonly string[];
  contracts: Options;
  developerAccounts: Options;
  chains: Options;
}) {
  const [topic, setTopic] = useState("balance.dev_account");
  const [args, setArgs] = useState("");
  const balance = topic.startsWith("balance.");
  const argList = args.split("\n").map((a) => a.trim()).filter(Boolean);
  return (
    <ActionForm action={action}>
      <div className="grid gap-4 sm:grid-cols-2">
        <TextInput label="Name" name="name" required maxLength={100} placeholder="Treasury running low" />
        <Select label="Topic" name="topic" options={[...topics]} value={topic} onChange={(e) => setTopic(e.target.value)} hint={HINTS[topic] ?? "A named topic: nothing is monitored."} />
      </div>
      {topic === "balance.contract" && (
        <div className="grid gap-4 sm:grid-cols-2">
          {contracts.length ? <Select label="Contract" name="contract" options={contracts} /> : <p className="text-sm text-amber-900">Register a contract first (Contracts).</p>}
          <TextInput label="Function" name="functionName" required placeholder="balanceOf" />
          <TextArea label="Arguments, one per line" name="$functionArgs" rows={2} value={args} onChange={(e) => setArgs(e.target.value)} placeholder="0x… (or a pla_, acc_ or con_ id)" />
          {argList.map((arg, i) => (
            <input key={i} type="hidden" name={`functionArgs[${i}]`} value={arg} />
          ))}
        </div>
      )}
      {topic === "balance.dev_account" && (
        <div className="grid gap-4 sm:grid-cols-2">
          {developerAccounts.length ? <Select label="Developer account" name="developerAccount" options={developerAccounts} /> : <p className="text-sm text-amber-900">Add a developer account first (API: /v1/settings/developer_accounts).</p>}
          <Select label="Chain" name="chainId" options={chains} />
        </div>
      )}
      {topic === "balance.project" && <Select label="Chain" name="chainId" options={[["", "Every chain of this mode"], ...chains]} />}
      {balance && (
        <div className="grid gap-4 sm:grid-cols-2">
          <TextInput label="Threshold (base units, wei)" name="threshold" required inputMode="numeric" placeholder="100000000000000000" hint="The event is sent once the value falls below this." />
          <TextInput label="Blocks below before sending" name="numberOfBlocks" type="number" min={0} max={10000} defaultValue={0} hint="0 sends at the first reading below the threshold." />
        </div>
      )}
      <SubmitButton>Create event</SubmitButton>
    </ActionForm>
  );
}
