import { formatUnits } from "viem";

// Amounts of the sponsorship ledger as pages show them: wei in the chain's coin, dollars as dollars. Pure, so both the
// server pages and the dry-run form (a client component) use it.

/** Wei as coins, to 6 significant digits ("0.000412 ETH"); the exact amount is the title of <Coins>. */
export function coins(wei: string | bigint, symbol: string, decimals = 18): string {
  const n = Number(formatUnits(BigInt(wei), decimals));
  const text = Math.abs(n) >= 1 ? n.toLocaleString("en-US", { maximumFractionDigits: 6 }) : n.toLocaleString("en-US", { maximumSignificantDigits: 6 });
  return `${text} ${symbol}`;
}

const usdFormat = new Intl.NumberFormat("en-US", { style: "currency", currency: "USD", minimumFractionDigits: 2, maximumFractionDigits: 6 });

/** Dollars (a decimal string, as the ledger keeps them) as "$0.80"; "—" without a price. */
export const dollars = (usd: string | null | undefined) => (usd === null || usd === undefined ? "—" : usdFormat.format(Number(usd)));

/** An amount in a budget's or check's unit: wei of the coin, dollars, or a count. */
export type AmountUnit = "wei" | "usd" | "count";

export function inUnit(value: string, unit: AmountUnit, symbol: string): string {
  if (unit === "usd") return dollars(value);
  if (unit === "count") return value;
  return coins(value, symbol);
}

/** Wei as coins, the exact wei on hover; with its dollars beneath when known. */
export function Coins({ wei, symbol, usd, testId }: { wei: string; symbol: string; usd?: string | null; testId?: string }) {
  return (
    <span className="inline-flex flex-col">
      <span title={`${wei} wei`} data-testid={testId}>
        {coins(wei, symbol)}
      </span>
      {usd !== undefined && usd !== null && <span className="text-xs font-normal text-slate-500">{dollars(usd)}</span>}
    </span>
  );
}
