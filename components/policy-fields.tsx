"use client";

import { useState } from "react";
import { SPONSOR_SCHEMA_WORDS } from "@/lib/policies/purposes";
import { Select, TextInput } from "./form";

type Schema = keyof typeof SPONSOR_SCHEMA_WORDS;

/** A policy's strategy: who pays the gas, and for the token schemas which token at what rate. */
export function StrategyFields({ tokens, defaults }: { tokens: { id: string; name: string }[]; defaults?: { sponsorSchema: Schema; tokenContract?: string; tokenContractAmount?: string } }) {
  const [schema, setSchema] = useState<Schema>(defaults?.sponsorSchema ?? "pay_for_user");
  return (
    <div className="space-y-4">
      <Select
        label="Who pays the gas"
        name="strategy[sponsorSchema]"
        value={schema}
        onChange={(e) => setSchema(e.target.value as Schema)}
        hint={SPONSOR_SCHEMA_WORDS[schema]}
        options={[
          ["pay_for_user", "You do (pay for the player)"],
          ["fixed_rate", "The player, a fixed amount of your token"],
          ["charge_custom_tokens", "The player, the gas cost in your token"],
        ]}
      />
      {schema !== "pay_for_user" && (
        <div className="grid gap-4 sm:grid-cols-2">
          <Select
            label="Token contract"
            name="strategy[tokenContract]"
            defaultValue={defaults?.tokenContract}
            hint={tokens.length === 0 ? "Register your ERC-20 token under Contracts first." : undefined}
            options={tokens.map((t): [string, string] => [t.id, t.name])}
          />
          <TextInput
            label={schema === "fixed_rate" ? "Tokens per transaction (base units)" : "Tokens per native coin (base units)"}
            name="strategy[tokenContractAmount]"
            inputMode="numeric"
            required
            defaultValue={defaults?.tokenContractAmount}
          />
        </div>
      )}
    </div>
  );
}

/**
 * Which paymaster signs the policy's sponsorships: ours, or a registered ERC-7677 service. Values are JSON (the
 * form names `paymaster` in `$json`), so "ours" can be sent as "" on an edit, which the dashboard would otherwise drop.
 */
export function PaymasterSelect({ paymasters, defaultValue }: { paymasters: { id: string; name: string }[]; defaultValue?: string }) {
  return (
    <>
      <input type="hidden" name="$json" value="paymaster" />
      <Select
        label="Paymaster"
        name="paymaster"
        defaultValue={JSON.stringify(defaultValue ?? "")}
        hint={paymasters.length === 0 ? "Register an ERC-7677 paymaster service under Paymasters to sponsor through it." : "A registered paymaster's ERC-7677 service signs the sponsorship, after this policy's rules allow it."}
        options={[
          [JSON.stringify(""), "This service's paymaster"],
          ...paymasters.map((p): [string, string] => [JSON.stringify(p.id), `${p.name} (${p.id})`]),
          // The policy's current paymaster stays selectable even when it is not offered (its url was removed), so saving changes nothing.
          ...(defaultValue && !paymasters.some((p) => p.id === defaultValue) ? [[JSON.stringify(defaultValue), defaultValue] as [string, string]] : []),
        ]}
      />
    </>
  );
}

/** Whether our ERC-7677 service may sponsor senders the project does not know under the policy. */
export function OutsideAccountsSelect({ defaultValue = false }: { defaultValue?: boolean }) {
  return (
    <Select
      label="ERC-7677 senders"
      name="sponsorOutsideAccounts"
      defaultValue={String(defaultValue)}
      hint="Who this service's ERC-7677 endpoint sponsors under this policy. Outside accounts are any sender holding your publishable key can name."
      options={[
        ["false", "Only this project's accounts"],
        ["true", "Also outside accounts"],
      ]}
    />
  );
}
