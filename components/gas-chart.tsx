"use client";

import { Bar, CartesianGrid, ComposedChart, Legend, Line, ResponsiveContainer, Tooltip, XAxis, YAxis } from "recharts";

export interface GasChartPoint {
  day: string;
  /** In the native coin. */
  fee: number;
  gasUsed: number;
}

const compact = new Intl.NumberFormat("en-US", { notation: "compact", maximumFractionDigits: 2 });
// Sponsored fees are small fractions of a coin: significant digits, not fraction digits, keep them readable.
const coins = new Intl.NumberFormat("en-US", { maximumSignificantDigits: 3 });

/** Fees (bars, native coin, left axis) and gas used (line, right axis) for every day of the range. */
export function GasChart({ points, symbol, label }: { points: GasChartPoint[]; symbol: string; label: string }) {
  return (
    <figure aria-label={label} data-testid="gas-chart" className="h-64 w-full min-w-0">
      <ResponsiveContainer width="100%" height="100%" minWidth={0}>
        <ComposedChart data={points} margin={{ top: 8, right: 8, bottom: 0, left: 0 }}>
          <CartesianGrid strokeDasharray="3 3" stroke="#e2e8f0" />
          <XAxis dataKey="day" tick={{ fontSize: 11 }} tickFormatter={(day: string) => day.slice(5)} minTickGap={16} />
          <YAxis yAxisId="fee" tick={{ fontSize: 11 }} width={64} tickFormatter={(v: number) => coins.format(v)} />
          <YAxis yAxisId="gas" orientation="right" tick={{ fontSize: 11 }} width={48} tickFormatter={(v: number) => compact.format(v)} />
          <Tooltip formatter={(value, name) => (name === `Fees (${symbol})` ? `${value} ${symbol}` : Number(value).toLocaleString("en-US"))} />
          <Legend wrapperStyle={{ fontSize: 12 }} />
          <Bar yAxisId="fee" dataKey="fee" name={`Fees (${symbol})`} fill="#4f46e5" isAnimationActive={false} />
          <Line yAxisId="gas" dataKey="gasUsed" name="Gas used" stroke="#f59e0b" dot={false} type="linear" isAnimationActive={false} />
        </ComposedChart>
      </ResponsiveContainer>
    </figure>
  );
}
