"use client";

import { startTransition, useActionState, useState } from "react";
import { formatUnits } from "viem";
import type { FormState } from "@/lib/dashboard/form-state";
import { FormFeedback, Select, SubmitButton, TextInput } from "./form";
import { buttonClass } from "./page";

export interface SwapChain {
  chainId: number;
  name: string;
  /** Tokens to pick from (the local exchange's demo tokens); any address may be typed too. */
  tokens: { address: string; symbol: string }[];
}

type Amount = { token: { address: string; decimals: number; symbol: string }; value: string };
type Quote = { amount: Amount; amountWithMaxSlippage: Amount; slippage: number; fees: { recipient: string; basisPoints: number; amount: Amount }[]; estimatedTXGasFee: string };

const show = (a: Amount) => `${formatUnits(BigInt(a.value), a.token.decimals)} ${a.token.symbol || a.token.address}`;

/**
 * A swap from a quote: the form asks POST /v1/exchange/quote, shows what it answered, and "Swap" sends exactly
 * the quoted request to POST /v1/exchange (changing a field asks for a new quote first).
 */
export function SwapForm({
  quoteAction,
  swapAction,
  chains,
  players,
  policies,
  player,
}: {
  quoteAction: (state: FormState, form: FormData) => Promise<FormState>;
  swapAction: (state: FormState, form: FormData) => Promise<FormState>;
  chains: SwapChain[];
  players: { id: string; name: string }[];
  policies: { id: string; name: string; chainId: number }[];
  player?: string;
}) {
  const [quoteState, quote, quoting] = useActionState(quoteAction, {});
  const [swapState, swap, swapping] = useActionState(swapAction, {});
  const [quoted, setQuoted] = useState<FormData | null>(null);
  const [last, setLast] = useState<"quote" | "swap">("quote");
  const [chainId, setChainId] = useState(chains[0]?.chainId ?? 0);
  const chain = chains.find((c) => c.chainId === chainId);
  if (!chain) return <p className="text-sm text-slate-600">No chain of this mode has an exchange: configure a router for one (CHAIN_&lt;id&gt;_ROUTER).</p>;
  const result = quoted && quoteState.ok ? (quoteState.data as unknown as Quote) : null;
  const tokens = [{ address: "native", symbol: "native coin" }, ...chain.tokens];
  return (
    <div className="space-y-4">
      <form
        className="space-y-4"
        onChange={() => setQuoted(null)}
        onSubmit={(e) => {
          e.preventDefault();
          const data = new FormData(e.currentTarget);
          setQuoted(data);
          setLast("quote");
          startTransition(() => quote(data));
        }}
      >
        <FormFeedback error={last === "quote" ? quoteState.error : swapState.error} pending={quoting || swapping}>
          <div className="grid gap-4 sm:grid-cols-2">
            <Select label="Chain" name="chainId" value={String(chainId)} onChange={(e) => setChainId(Number(e.target.value))} options={chains.map((c): [string, string] => [String(c.chainId), `${c.name} (${c.chainId})`])} />
            <TextInput label="From (player, account or address)" name="fromAddress" list="swap-players" required defaultValue={player} placeholder="pla_… / acc_… / 0x…" />
            <TextInput label="Sell (token address or native)" name="tokenInAddress" list="swap-tokens" required defaultValue="native" />
            <TextInput label="Buy (token address or native)" name="tokenOutAddress" list="swap-tokens" required defaultValue={chain.tokens[0]?.address} />
            <TextInput label="Amount (base units)" name="amount" inputMode="numeric" required placeholder="10000000000000000" />
            <Select label="Trade type" name="tradeType" options={[["EXACT_INPUT", "Exact input: sell this amount"], ["EXACT_OUTPUT", "Exact output: buy this amount"]]} />
            <TextInput label="Slippage (%)" name="slippagePercent" inputMode="decimal" placeholder="0.1" />
            <TextInput label="Max hops" name="maxHops" inputMode="numeric" placeholder="2" />
            <Select label="Sponsored by" name="policy" options={[["", "No policy: the account pays its gas"], ...policies.filter((p) => p.chainId === chainId).map((p): [string, string] => [p.id, p.name])]} />
          </div>
          <datalist id="swap-players">
            {players.map((p) => (
              <option key={p.id} value={p.id}>
                {p.name}
              </option>
            ))}
          </datalist>
          <datalist id="swap-tokens">
            {tokens.map((t) => (
              <option key={t.address} value={t.address}>
                {t.symbol}
              </option>
            ))}
          </datalist>
          <SubmitButton variant="secondary">Get quote</SubmitButton>
        </FormFeedback>
      </form>
      {result && (
        <div className="rounded-md border border-slate-200 bg-slate-50 p-4 text-sm" data-testid="swap-quote">
          <dl className="grid gap-x-4 gap-y-1 sm:grid-cols-[max-content_1fr]">
            <dt className="text-slate-500">{quoted?.get("tradeType") === "EXACT_OUTPUT" ? "Expected cost" : "Expected to receive"}</dt>
            <dd className="font-mono">{show(result.amount)}</dd>
            <dt className="text-slate-500">{quoted?.get("tradeType") === "EXACT_OUTPUT" ? "At most" : "At least"}</dt>
            <dd className="font-mono">
              {show(result.amountWithMaxSlippage)} (slippage {result.slippage}%)
            </dd>
            {result.fees.map((f) => [
              <dt key="t" className="text-slate-500">
                Service fee ({f.basisPoints / 100}%)
              </dt>,
              <dd key="d" className="font-mono">
                {show(f.amount)} to {f.recipient}
              </dd>,
            ])}
            <dt className="text-slate-500">Estimated gas</dt>
            <dd className="font-mono">{formatUnits(BigInt(result.estimatedTXGasFee), 18)}</dd>
          </dl>
          <button
            type="button"
            className={`${buttonClass("primary")} mt-3`}
            disabled={swapping}
            onClick={() => {
              setLast("swap");
              startTransition(() => swap(quoted!));
            }}
          >
            {swapping ? "Working…" : "Swap"}
          </button>
        </div>
      )}
    </div>
  );
}
