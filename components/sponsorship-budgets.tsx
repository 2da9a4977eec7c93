import Link from "next/link";
import type { BudgetRow } from "@/lib/dashboard/sponsorship";
import { Table } from "./table";
import { Time } from "./time";
import { inUnit } from "./sponsorship-amounts";

const PERIOD_WORDS: Record<string, string> = { day: "today (UTC)", week: "this week (UTC)", month: "this month (UTC)", total: "in total" };

/** How much of the budget is used: a bar (amber past 80%, red when spent) and the share in words. */
function UseBar({ share }: { share: number }) {
  const percent = Math.min(100, Math.round(share * 100));
  const color = share >= 1 ? "bg-rose-500" : share >= 0.8 ? "bg-amber-500" : "bg-indigo-500";
  return (
    <div className="mt-1 flex items-center gap-2" title={`${percent}% used`}>
      <div className="h-1.5 w-24 overflow-hidden rounded-full bg-slate-200" role="meter" aria-label="Budget used" aria-valuemin={0} aria-valuemax={100} aria-valuenow={percent}>
        <div className={`h-full ${color}`} style={{ width: `${percent}%` }} />
      </div>
      <span className="text-xs text-slate-500">{percent}%</span>
    </div>
  );
}

/** The use column: the amount used with its bar; or why there is none to show. */
function Used({ row }: { row: BudgetRow }) {
  if (row.scope === "operation") return <span className="text-slate-500">each operation on its own</span>;
  if (row.used === null) return <span className="text-slate-500">name a {row.scope} to see theirs</span>;
  return (
    <div>
      <span>
        {inUnit(row.used, row.unit, row.symbol)} {PERIOD_WORDS[row.period] ?? ""}
      </span>
      {row.share !== null && <UseBar share={row.share} />}
    </div>
  );
}

/** When the budget starts again: its period's end, never for a total, or not at all for a per-operation cap. */
function Resets({ row }: { row: BudgetRow }) {
  if (row.scope === "operation") return <span className="text-slate-500">—</span>;
  if (row.resetsAt === null) return <span className="text-slate-500">never (a total)</span>;
  return <Time seconds={row.resetsAt} />;
}

/** Each budget rule against its limit: used, remaining, when it resets, whose use it is. */
export function BudgetTable({ rows, base, showPolicy = true }: { rows: BudgetRow[]; base: string; showPolicy?: boolean }) {
  return (
    <Table<BudgetRow>
      rows={rows}
      rowKey={(r) => r.rule}
      columns={[
        ...(showPolicy
          ? [
              {
                header: "Policy",
                cell: (r: BudgetRow) => (
                  <Link className="font-medium text-indigo-700 hover:underline" href={`${base}/policies/${r.policy.id}`}>
                    {r.policy.name}
                  </Link>
                ),
              },
            ]
          : []),
        { header: "Budget", cell: (r) => <span className="whitespace-normal">{r.description}</span>, className: "min-w-64" },
        { header: "Used", cell: (r) => <Used row={r} /> },
        {
          header: "Remaining",
          cell: (r) => (r.remaining === null ? <span className="text-slate-400">—</span> : <span data-testid={`budget-remaining-${r.rule}`}>{inUnit(r.remaining, r.unit, r.symbol)}</span>),
        },
        { header: "Limit", cell: (r) => inUnit(r.limit, r.unit, r.symbol) },
        { header: "Resets at", cell: (r) => <Resets row={r} /> },
        { header: "Whose", cell: (r) => (r.subject ? <span className="font-mono text-xs">{r.subject}</span> : <span className="text-slate-400">—</span>) },
      ]}
    />
  );
}

/** A GET form naming whose use the per-player and per-account budgets show. */
export function BudgetSubjectForm({ player, account, keep = {} }: { player?: string; account?: string; keep?: Record<string, string | undefined> }) {
  const inputClass = "rounded-md border border-slate-300 bg-white px-2 py-1.5 font-mono text-xs";
  return (
    <form method="get" aria-label="Whose budget use" className="mb-3 flex flex-wrap items-end gap-2 text-sm">
      {Object.entries(keep).map(([name, value]) => value && <input key={name} type="hidden" name={name} value={value} />)}
      <label className="flex flex-col gap-1 text-xs font-medium text-slate-600">
        Player
        <input name="player" defaultValue={player} placeholder="pla_…" className={inputClass} />
      </label>
      <label className="flex flex-col gap-1 text-xs font-medium text-slate-600">
        Account
        <input name="account" defaultValue={account} placeholder="acc_…" className={inputClass} />
      </label>
      <button type="submit" className="rounded-md border border-slate-300 bg-white px-3 py-1.5 text-sm hover:bg-slate-50">
        Show their use
      </button>
    </form>
  );
}
