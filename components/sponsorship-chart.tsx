"use client";

import { Bar, CartesianGrid, ComposedChart, Legend, Line, ResponsiveContainer, Tooltip, XAxis, YAxis } from "recharts";

export interface SpendChartPoint {
  day: string;
  /** Settled that day, in the native coin. */
  spent: number;
  /** The same in dollars; null when the chain's settlements were not all priced. */
  usd: number | null;
}

// Sponsored costs are small fractions of a coin: significant digits, not fraction digits, keep them readable.
const coinFormat = new Intl.NumberFormat("en-US", { maximumSignificantDigits: 3 });
const usdFormat = new Intl.NumberFormat("en-US", { style: "currency", currency: "USD", maximumSignificantDigits: 3 });

/** What landed operations cost per day: bars in the native coin (left axis), and a line in dollars (right axis) when priced. */
export function SpendChart({ points, symbol, label }: { points: SpendChartPoint[]; symbol: string; label: string }) {
  const priced = points.length > 0 && points.every((p) => p.usd !== null);
  const coinName = `Settled (${symbol})`;
  return (
    <figure aria-label={label} data-testid="sponsorship-chart" className="h-64 w-full min-w-0">
      <ResponsiveContainer width="100%" height="100%" minWidth={0}>
        <ComposedChart data={points} margin={{ top: 8, right: 8, bottom: 0, left: 0 }}>
          <CartesianGrid strokeDasharray="3 3" stroke="#e2e8f0" />
          <XAxis dataKey="day" tick={{ fontSize: 11 }} tickFormatter={(day: string) => day.slice(5)} minTickGap={16} />
          <YAxis yAxisId="coin" tick={{ fontSize: 11 }} width={64} tickFormatter={(v: number) => coinFormat.format(v)} />
          {priced && <YAxis yAxisId="usd" orientation="right" tick={{ fontSize: 11 }} width={56} tickFormatter={(v: number) => usdFormat.format(v)} />}
          <Tooltip formatter={(value, name) => (name === coinName ? `${value} ${symbol}` : usdFormat.format(Number(value)))} />
          <Legend wrapperStyle={{ fontSize: 12 }} />
          <Bar yAxisId="coin" dataKey="spent" name={coinName} fill="#4f46e5" isAnimationActive={false} />
          {priced && <Line yAxisId="usd" dataKey="usd" name="Settled (USD)" stroke="#f59e0b" dot={false} type="linear" isAnimationActive={false} />}
        </ComposedChart>
      </ResponsiveContainer>
    </figure>
  );
}
