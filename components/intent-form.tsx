"use client";

import { useState } from "react";
import type { FormFunction } from "@/lib/dashboard/contracts";
import type { FormState } from "@/lib/dashboard/form-state";
import { ActionForm, PlayerField, Select, SubmitButton, TextInput } from "./form";

export interface IntentFormContract {
  id: string;
  name: string;
  chainId: number;
  writable: FormFunction[];
}

/**
 * Sends a transaction intent from the dashboard, as the API would from a server: a player, a
 * call to a registered contract, and optionally the policy that sponsors it.
 */
export function IntentForm({
  action,
  contracts,
  players,
  policies,
  player,
}: {
  action: (state: FormState, form: FormData) => Promise<FormState>;
  contracts: IntentFormContract[];
  players: { id: string; name: string }[];
  policies: { id: string; name: string; chainId: number }[];
  player?: string;
}) {
  const callable = contracts.filter((c) => c.writable.length > 0);
  const [contractId, setContractId] = useState(callable[0]?.id ?? "");
  const [fnIndex, setFnIndex] = useState(0);
  const contract = callable.find((c) => c.id === contractId);
  if (!contract) return <p className="text-sm text-slate-600">Register a contract with at least one function that is not view or pure, then send a transaction to it from here.</p>;
  const fn = contract.writable[Math.min(fnIndex, contract.writable.length - 1)]!;
  return (
    <ActionForm action={action}>
      <div className="grid gap-4 sm:grid-cols-2">
        <PlayerField id="intent-player" players={players} required defaultValue={player} />
        <Select
          label="Sponsored by"
          name="policy"
          options={[["", "No policy: the account pays its gas"], ...policies.filter((p) => p.chainId === contract.chainId).map((p): [string, string] => [p.id, p.name])]}
        />
        <Select
          label="Contract"
          name="$contract"
          value={contractId}
          onChange={(e) => {
            setContractId(e.target.value);
            setFnIndex(0);
          }}
          options={callable.map((c): [string, string] => [c.id, c.name])}
        />
        <Select label="Function" name="$function" value={String(fnIndex)} onChange={(e) => setFnIndex(Number(e.target.value))} options={contract.writable.map((f, i): [string, string] => [String(i), f.signature])} />
      </div>
      <input type="hidden" name="chainId" value={contract.chainId} />
      <input type="hidden" name="interactions[0][contract]" value={contract.id} />
      <input type="hidden" name="interactions[0][functionName]" value={fn.name} />
      {fn.inputs.map((input, i) => (
        <TextInput key={`${contract.id}-${fn.signature}-${i}`} label={`${input.name || `argument ${i + 1}`} (${input.type})`} name={`interactions[0][functionArgs][${i}]`} required hint={input.type.endsWith("]") || input.type.startsWith("tuple") ? "JSON, e.g. [1, 2]" : undefined} />
      ))}
      <TextInput label="Value (wei)" name="interactions[0][value]" inputMode="numeric" placeholder="0" />
      <SubmitButton>Send transaction</SubmitButton>
    </ActionForm>
  );
}
