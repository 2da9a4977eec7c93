import { GasChart } from "@/components/gas-chart";
import { Select, TextInput } from "@/components/form";
import { buttonClass, Card, EmptyState, ErrorMessage, PageHeader } from "@/components/page";
import { Table } from "@/components/table";
import { chainLabel } from "@/lib/dashboard/chains";
import { scopeOf, type ScopeParams } from "@/lib/dashboard/context";
import { dailySeries, formatGas, formatUsd, gasReport, gasReportQuery, MAX_RANGE_DAYS, reportablePolicies, type GasAmounts, type GasReport } from "@/lib/dashboard/gas-report";
import { getDb } from "@/lib/db/client";
import { ApiError } from "@/lib/errors";

export const metadata = { title: "Gas reports" };

function Stat({ label, value, testId }: { label: string; value: string; testId: string }) {
  return (
    <div className="min-w-0 rounded-md border border-slate-200 px-3 py-2">
      <div className="text-xs font-medium text-slate-500">{label}</div>
      <div className="mt-0.5 break-all font-semibold" data-testid={testId}>
        {value}
      </div>
    </div>
  );
}

export default async function GasReportsPage({ params, searchParams }: { params: ScopeParams; searchParams: Promise<Record<string, string | string[] | undefined>> }) {
  const scope = await scopeOf(params);
  const query = gasReportQuery(await searchParams);
  const db = await getDb();
  const policies = await reportablePolicies(db, scope.ctx);
  let report: GasReport | null = null;
  let error: string | null = null;
  try {
    report = await gasReport(db, scope.ctx, query);
  } catch (err) {
    // A bad date range or policy id in the URL: say what is wrong above the filters, keep them editable.
    if (!(err instanceof ApiError) || err.status >= 500) throw err;
    error = err.message;
  }
  const filters = report ? { policy: report.policy?.id ?? "", from: report.from, to: report.to } : { policy: query.policy ?? "", from: query.from ?? "", to: query.to ?? "" };
  const csvHref = `${scope.base}/reports/csv?${new URLSearchParams(filters)}`;
  return (
    <>
      <PageHeader
        title="Gas reports"
        description={`The gas your policies sponsored and what it cost, per UTC day, for up to ${MAX_RANGE_DAYS} days at a time. An intent counts on the day it was created (the service records its block, not when it landed), as in the API's /v1/policies/{id}/reports.`}
        actions={
          report && (
            <a href={csvHref} download className={buttonClass("secondary")}>
              Download CSV
            </a>
          )
        }
      />
      <form method="get" className="mb-6 grid grid-cols-1 items-end gap-3 rounded-lg border border-slate-200 bg-white p-4 shadow-sm sm:grid-cols-[minmax(0,2fr)_minmax(0,1fr)_minmax(0,1fr)_auto]">
        <Select
          label="Policy"
          name="policy"
          defaultValue={filters.policy}
          options={[["", "All policies"], ...policies.map((p): [string, string] => [p.id, `${p.name}${p.deleted ? " (deleted)" : ""} · ${chainLabel(p.chainId)}`])]}
        />
        <TextInput label="From" name="from" type="date" defaultValue={filters.from} />
        <TextInput label="To" name="to" type="date" defaultValue={filters.to} />
        <button type="submit" className={buttonClass()}>
          Show report
        </button>
      </form>
      {error && <ErrorMessage className="mb-6">{error}</ErrorMessage>}
      {report && report.chains.length === 0 && (
        <EmptyState title={report.policy ? `${report.policy.name} sponsored no gas from ${report.from} to ${report.to}` : `No sponsored gas from ${report.from} to ${report.to}`}>
          {policies.length === 0 ? (
            <p>
              Reports count the gas your policies pay for. <a className="text-indigo-700 hover:underline" href={`${scope.base}/policies/new`}>Create a policy</a> with a rule saying which calls it sponsors, then send a transaction
              intent under it.
            </p>
          ) : (
            <p>
              Gas shows up here once a transaction intent sponsored by {report.policy ? "this policy" : "one of your policies"} lands. Send one from{" "}
              <a className="text-indigo-700 hover:underline" href={`${scope.base}/intents`}>
                Transaction intents
              </a>{" "}
              (choose the policy under &ldquo;Sponsored by&rdquo;) or through the API with <code>policy=pol_…</code>, or widen the date range.
            </p>
          )}
        </EmptyState>
      )}
      {report?.chains.map((chain) => (
        <Card key={chain.chainId} title={`${chain.name} (${chain.chainId})`}>
          <div className="mb-4 grid grid-cols-2 gap-3 lg:grid-cols-4">
            <Stat label="Intents" value={String(chain.totals.intents)} testId={`total-intents-${chain.chainId}`} />
            <Stat label="Gas used" value={formatGas(chain.totals.gasUsed)} testId={`total-gas-${chain.chainId}`} />
            <Stat label={`Fees (${chain.symbol})`} value={`${chain.totals.feeNative} ${chain.symbol}`} testId={`total-fee-native-${chain.chainId}`} />
            <Stat label="Fees (USD)" value={formatUsd(chain.totals.feeUsd)} testId={`total-fee-usd-${chain.chainId}`} />
          </div>
          {chain.totals.feeUsd === null && (
            <p className="mb-4 text-xs text-slate-500">
              No USD price for this chain: set <code>CHAIN_{chain.chainId}_USD_PRICE</code> (the {chain.symbol} price in USD) to see USD amounts.
            </p>
          )}
          <GasChart points={dailySeries(report, chain)} symbol={chain.symbol} label={`Fees and gas per day on ${chain.name}`} />
          <div className="mt-4">
            <Table<GasAmounts & { day: string }>
              rows={[...chain.days].reverse()}
              rowKey={(d) => d.day}
              columns={[
                { header: "Day (UTC)", cell: (d) => d.day },
                { header: "Intents", cell: (d) => d.intents, className: "text-right" },
                { header: "Gas used", cell: (d) => formatGas(d.gasUsed), className: "text-right" },
                { header: `Fees (${chain.symbol})`, cell: (d) => d.feeNative, className: "text-right" },
                { header: "Fees (USD)", cell: (d) => formatUsd(d.feeUsd), className: "text-right" },
              ]}
            />
          </div>
        </Card>
      ))}
    </>
  );
}
