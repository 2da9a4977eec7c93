import type { GasReport } from "./gas-report";

export const GAS_REPORT_CSV_HEADER = ["date", "chain_id", "symbol", "intents", "gas_used", "fee_wei", "fee_native", "fee_usd"] as const;

// Chain names and symbols come from the operator's configuration: quote whatever CSV would misread.
const cell = (value: string | number | null) => {
  const text = value === null ? "" : String(value);
  return /[",\r\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
};

/** One line a day and chain with landed intents (chain by chain, oldest day first); fee_usd is empty when the chain has no USD price. */
export function gasReportCsv(report: GasReport): string {
  const lines = [GAS_REPORT_CSV_HEADER.join(",")];
  for (const chain of report.chains) {
    for (const d of chain.days) lines.push([d.day, chain.chainId, chain.symbol, d.intents, d.gasUsed, d.feeWei, d.feeNative, d.feeUsd].map(cell).join(","));
  }
  return lines.join("\r\n") + "\r\n";
}

export const gasReportFilename = (report: GasReport) => `gas-report-${report.policy?.id ?? "all-policies"}-${report.from}-to-${report.to}.csv`;
