import Link from "next/link";
import type { ReactNode } from "react";
import { Badge } from "@/components/badge";
import { CodeBlock, Mono } from "@/components/code";
import { buttonClass, Card, EmptyState, ErrorMessage, PageHeader } from "@/components/page";
import { Coins } from "@/components/sponsorship-amounts";
import { BudgetSubjectForm, BudgetTable } from "@/components/sponsorship-budgets";
import { SpendChart } from "@/components/sponsorship-chart";
import { Pagination, pageHref, Table } from "@/components/table";
import { Time } from "@/components/time";
import { findChain } from "@/lib/chain/registry";
import { chainLabel, chainOptions } from "@/lib/dashboard/chains";
import { scopeOf, type ScopeParams } from "@/lib/dashboard/context";
import { reportablePolicies } from "@/lib/dashboard/gas-report";
import { readOperation, runOperation } from "@/lib/dashboard/operations";
import { pageParams } from "@/lib/dashboard/paging";
import { budgetRows, budgetSubject, chainBooks, declinesByReason, ledgerFilters, RECENT_DAYS, spendPerDay, spendSeries, topSpenders } from "@/lib/dashboard/sponsorship";
import { getDb } from "@/lib/db/client";
import type { DeclineCode } from "@/lib/sponsorship/declines";
import { listBalances, listLedger } from "@/lib/sponsorship/operations";
import { ENTRY_CAUSES, ENTRY_KINDS, type EntryResponse } from "@/lib/sponsorship/schema";

export const metadata = { title: "Sponsorship" };

/** Why sponsorship was refused, in words (the API's decline codes). */
const DECLINE_WORDS: Record<DeclineCode, string> = {
  balance_insufficient: "The project's sponsorship balance could not cover what the operation might cost.",
  budget_exhausted: "A budget rule had too little left.",
  outside_time_window: "Outside a time window rule's dates.",
  gas_price_too_high: "The fee per gas was above a gas price rule's ceiling.",
  webhook_declined: "Your approval webhook said no (or failed, with onError decline).",
  no_matching_rule: "No rule of the policy allows the call.",
  rate_limited: "A rate limit was reached (count or gas per interval).",
  max_cost_exceeded: "The most the operation may cost (its gas at its fee) is over the policy's per-transaction limit or the service's cap.",
  policy_disabled: "The policy was disabled.",
};

const KIND_TONES = { credit: "green", debit: "red", hold: "amber", settle: "blue", release: "gray", reversal: "red" } as const;

function Stat({ label, children }: { label: string; children: ReactNode }) {
  return (
    <div className="min-w-0 rounded-md border border-slate-200 px-3 py-2">
      <div className="text-xs font-medium text-slate-500">{label}</div>
      <div className="mt-0.5 break-all font-semibold">{children}</div>
    </div>
  );
}

const filterClass = "rounded-md border border-slate-300 bg-white px-2 py-1.5 text-sm";
const idInputClass = `${filterClass} font-mono text-xs`;

/** An id the ledger names, linked to its page when the dashboard has one. */
function IdLink({ id, href }: { id: string | undefined; href?: string }) {
  if (!id) return <span className="text-slate-400">—</span>;
  return href ? (
    <Link className="font-mono text-xs text-indigo-700 hover:underline" href={href}>
      {id}
    </Link>
  ) : (
    <span className="font-mono text-xs">{id}</span>
  );
}

export default async function SponsorshipPage({ params, searchParams }: { params: ScopeParams; searchParams: Promise<Record<string, string | undefined>> }) {
  const scope = await scopeOf(params);
  const query = await searchParams;
  const page = pageParams(query);
  const filters = ledgerFilters(query);
  const subject = budgetSubject(query);
  const db = await getDb();
  // Balances first: a chain's first read makes its balance row (and a local chain's test credit), which the ledger then shows.
  const balances = await readOperation(scope.ctx, listBalances);
  const [ledger, budgets, spend, top, declines, policies, books] = await Promise.all([
    runOperation(scope.ctx, listLedger, { ...filters, ...page }),
    budgetRows(db, scope.ctx, subject),
    spendPerDay(db, scope.ctx),
    topSpenders(db, scope.ctx),
    declinesByReason(db, scope.ctx),
    reportablePolicies(db, scope.ctx),
    chainBooks(db, scope.ctx),
  ]);
  const symbolOf = (chainId: number) => findChain(chainId)?.nativeCurrency.symbol ?? "ETH";
  const filtered = Object.keys(filters).length > 0;
  const path = `${scope.base}/sponsorship`;
  return (
    <>
      <PageHeader
        title="Sponsorship"
        description={`What this project's ${scope.mode} mode may spend on sponsored gas, per chain: every sponsored operation holds its most cost before it is signed, settles at what it cost once it lands, or is released. Budgets, spend and declines are counted from this ledger.`}
      />

      <h2 className="mb-3 text-lg font-semibold">Balances</h2>
      {balances.data.map((b) => (
        <Card key={b.chainId} title={chainLabel(b.chainId)}>
          <div className="mb-4 grid grid-cols-2 gap-3 lg:grid-cols-4">
            <Stat label="Available">
              <Coins wei={b.available} symbol={b.currency} usd={b.usd?.available} testId={`available-${b.chainId}`} />
            </Stat>
            <Stat label="Held (in flight)">
              <Coins wei={b.held} symbol={b.currency} usd={b.usd?.held} testId={`held-${b.chainId}`} />
            </Stat>
            <Stat label="Settled (landed)">
              <Coins wei={b.settled} symbol={b.currency} usd={b.usd?.settled} testId={`settled-${b.chainId}`} />
            </Stat>
            <Stat label="Credited">
              <Coins wei={b.credited} symbol={b.currency} testId={`credited-${b.chainId}`} />
            </Stat>
          </div>
          {b.usd === null && <p className="mb-4 text-xs text-slate-500">No USD price for this chain now: set CHAIN_{b.chainId}_USD_PRICE or CHAIN_{b.chainId}_USD_AGGREGATOR to see dollars.</p>}
          <details className="text-sm">
            <summary className="cursor-pointer text-indigo-700">Fund this balance</summary>
            <div className="mt-3 space-y-3 text-slate-700">
              <p>The operator of this install credits it from the command line (an audited ledger entry, in {b.currency}):</p>
              <div data-testid={`fund-cli-${b.chainId}`}>
                <CodeBlock code={`npm run cli -- sponsorship credit --project ${scope.project.id} --mode ${scope.mode} --chain ${b.chainId} --amount 0.5`} />
              </div>
              <p>
                Or deposit on chain: a <strong>verified developer account</strong> of this project (<code className="text-xs">/v1/settings/developer_accounts</code>) calls{" "}
                <code className="text-xs">depositTo(paymaster)</code> on the EntryPoint with the amount as value. The deposit is credited to this balance automatically, exactly once, when it has its
                confirmations; a deposit from any other address is not.
              </p>
              <dl className="grid grid-cols-1 gap-x-4 gap-y-1 sm:grid-cols-[8rem_1fr]">
                <dt className="font-medium text-slate-500">EntryPoint</dt>
                <dd data-testid={`entrypoint-${b.chainId}`}>
                  <Mono value={b.entryPoint} full />
                </dd>
                <dt className="font-medium text-slate-500">Paymaster</dt>
                <dd data-testid={`paymaster-${b.chainId}`}>
                  <Mono value={b.paymaster} full />
                </dd>
              </dl>
              <CodeBlock code={`cast send ${b.entryPoint} "depositTo(address)" ${b.paymaster} \\\n  --value 0.5ether --rpc-url $RPC_URL --private-key $DEVELOPER_ACCOUNT_KEY`} />
            </div>
          </details>
        </Card>
      ))}

      <Card title="Books and chain" actions={<span className="text-xs text-slate-500">Every five minutes, the ledger beside what our paymasters paid on chain</span>}>
        <table className="w-full text-sm">
          <tbody>
            {books.map((b) => (
              <tr key={b.chainId} data-testid={`books-${b.chainId}`} className="border-t border-slate-100 first:border-0">
                <td className="py-1.5 pr-4 text-slate-600">{chainLabel(b.chainId)}</td>
                <td className="py-1.5">
                  {b.balanced === null
                    ? "Not reconciled yet."
                    : b.balanced
                      ? `In balance: every operation our paymasters paid through block ${b.toBlock} is charged once (checked ${new Date(b.at! * 1000).toISOString().replace("T", " ").slice(0, 16)} UTC).`
                      : `Not in balance through block ${b.toBlock}: the operator is alerted (npm run cli -- sponsorship reconcile --chain ${b.chainId}).`}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </Card>

      <Card title="Budgets" actions={<span className="text-xs text-slate-500">Every budget rule of this mode&apos;s policies, in its current UTC period</span>}>
        {budgets.length === 0 ? (
          <p className="text-sm text-slate-600">
            No policy has a budget rule. Add one on a{" "}
            <Link className="text-indigo-700 hover:underline" href={`${scope.base}/policies`}>
              policy&apos;s page
            </Link>{" "}
            to cap what it, each player or each account may spend per day, week, month or in total, in the chain&apos;s coin or in US dollars.
          </p>
        ) : (
          <>
            {budgets.some((r) => r.scope === "player" || r.scope === "account") && <BudgetSubjectForm player={subject.player} account={subject.account} keep={{ ...filters, player: undefined, account: undefined }} />}
            <BudgetTable rows={budgets} base={scope.base} />
          </>
        )}
      </Card>

      <Card title={`Spend per day (last ${RECENT_DAYS} days, UTC)`}>
        {spend.chains.length === 0 ? (
          <p className="text-sm text-slate-600">
            Nothing settled from {spend.from} to {spend.to}. Each sponsored operation counts here on the day it lands.
          </p>
        ) : (
          <div className="space-y-6">
            {spend.chains.map((chain) => (
              <div key={chain.chainId}>
                <p className="mb-2 text-sm">
                  <span className="font-medium">{chainLabel(chain.chainId)}</span>: <span data-testid={`spend-total-${chain.chainId}`}>{chain.total.operations}</span> operation
                  {chain.total.operations === 1 ? "" : "s"} settled, <Coins wei={chain.total.wei} symbol={chain.symbol} />
                  {chain.total.usd !== null && <span className="text-slate-500"> ({Number(chain.total.usd).toLocaleString("en-US", { style: "currency", currency: "USD" })})</span>}
                </p>
                <SpendChart points={spendSeries(spend, chain, findChain(chain.chainId)?.nativeCurrency.decimals)} symbol={chain.symbol} label={`Settled per day on ${chain.name}`} />
              </div>
            ))}
          </div>
        )}
      </Card>

      <div className="grid gap-x-6 lg:grid-cols-2">
        <Card title={`Top spending players (${top.month}, settled)`}>
          {top.chains.length === 0 ? (
            <p className="text-sm text-slate-600">No player&apos;s sponsored operation has landed this month.</p>
          ) : (
            <div className="space-y-4">
              {top.chains.map((chain) => (
                <div key={chain.chainId}>
                  <p className="mb-2 text-xs font-medium uppercase tracking-wide text-slate-500">{chainLabel(chain.chainId)}</p>
                  <Table
                    rows={chain.players}
                    rowKey={(p) => p.player.id}
                    columns={[
                      {
                        header: "Player",
                        cell: (p) => (
                          <Link className="text-indigo-700 hover:underline" href={`${scope.base}/players/${p.player.id}`}>
                            {p.player.name || <span className="font-mono text-xs">{p.player.id}</span>}
                          </Link>
                        ),
                      },
                      { header: "Operations", cell: (p) => p.operations, className: "text-right" },
                      { header: "Settled", cell: (p) => <Coins wei={p.wei} symbol={symbolOf(chain.chainId)} usd={p.usd} />, className: "text-right" },
                      {
                        header: "Ledger",
                        cell: (p) => (
                          <Link className="text-xs text-indigo-700 hover:underline" href={`${path}?player=${p.player.id}`}>
                            entries
                          </Link>
                        ),
                      },
                    ]}
                  />
                </div>
              ))}
            </div>
          )}
        </Card>

        <Card title={`Declines by reason (last ${RECENT_DAYS} days)`}>
          {declines.total === 0 ? (
            <p className="text-sm text-slate-600">Nothing was refused sponsorship from {declines.from} to {declines.to}.</p>
          ) : (
            <Table
              rows={declines.reasons}
              rowKey={(r) => r.code}
              columns={[
                {
                  header: "Reason",
                  cell: (r) => (
                    <div className="whitespace-normal">
                      <code className="text-xs">{r.code}</code>
                      <p className="text-xs text-slate-500">{DECLINE_WORDS[r.code as DeclineCode] ?? ""}</p>
                    </div>
                  ),
                  className: "min-w-56",
                },
                { header: "Declines", cell: (r) => <span data-testid={`declines-${r.code}`}>{r.count}</span>, className: "text-right" },
                { header: "Latest", cell: (r) => <Time seconds={r.lastAt} /> },
              ]}
            />
          )}
        </Card>
      </div>

      <h2 className="mb-3 mt-2 text-lg font-semibold">Ledger</h2>
      <form method="get" role="search" aria-label="Ledger filters" className="mb-3 flex flex-wrap items-end gap-2">
        <select name="chainId" aria-label="Chain" defaultValue={filters.chainId ?? ""} className={filterClass}>
          <option value="">Any chain</option>
          {chainOptions(scope.ctx).map(([id, label]) => (
            <option key={id} value={id}>
              {label}
            </option>
          ))}
        </select>
        <select name="kind" aria-label="Kind" defaultValue={filters.kind ?? ""} className={filterClass}>
          <option value="">Any kind</option>
          {ENTRY_KINDS.map((k) => (
            <option key={k} value={k}>
              {k}
            </option>
          ))}
        </select>
        <select name="cause" aria-label="Cause" defaultValue={filters.cause ?? ""} className={filterClass}>
          <option value="">Any cause</option>
          {ENTRY_CAUSES.map((c) => (
            <option key={c} value={c}>
              {c.replace("_", " ")}
            </option>
          ))}
        </select>
        <select name="policy" aria-label="Policy" defaultValue={filters.policy ?? ""} className={filterClass}>
          <option value="">Any policy</option>
          {policies.map((p) => (
            <option key={p.id} value={p.id}>
              {p.name}
              {p.deleted ? " (deleted)" : ""}
            </option>
          ))}
        </select>
        <input name="player" aria-label="Player" placeholder="pla_…" defaultValue={filters.player} className={idInputClass} />
        <input name="account" aria-label="Account" placeholder="acc_…" defaultValue={filters.account} className={idInputClass} />
        <input name="intent" aria-label="Intent" placeholder="tin_…" defaultValue={filters.intent} className={idInputClass} />
        <button type="submit" className={buttonClass("secondary")}>
          Filter
        </button>
        {filtered && (
          <Link className="text-sm text-indigo-700 hover:underline" href={path}>
            Clear
          </Link>
        )}
      </form>
      {!ledger.ok ? (
        <ErrorMessage>{ledger.error.message}</ErrorMessage>
      ) : ledger.data.total === 0 ? (
        <EmptyState title={filtered ? "No ledger entry matches these filters" : "The ledger is empty"}>
          <p>{filtered ? "Clear a filter, or pick another." : "Credits, holds, settlements and releases show up here as the balance is funded and spent."}</p>
        </EmptyState>
      ) : (
        <>
          <Table<EntryResponse>
            rows={ledger.data.data}
            rowKey={(e) => e.id}
            columns={[
              { header: "Time", cell: (e) => <Time seconds={e.createdAt} /> },
              { header: "Chain", cell: (e) => e.chainId },
              { header: "Kind", cell: (e) => <Badge tone={KIND_TONES[e.kind]}>{e.kind}</Badge> },
              { header: "Amount", cell: (e) => <Coins wei={e.amount} symbol={symbolOf(e.chainId)} usd={e.usd} />, className: "text-right" },
              { header: "Cause", cell: (e) => e.cause.replace("_", " ") },
              { header: "Intent", cell: (e) => <IdLink id={e.transactionIntent?.id} href={e.transactionIntent ? `${scope.base}/intents/${e.transactionIntent.id}` : undefined} /> },
              { header: "Player", cell: (e) => <IdLink id={e.player?.id} href={e.player ? `${scope.base}/players/${e.player.id}` : undefined} /> },
              { header: "Policy", cell: (e) => <IdLink id={e.policy?.id} href={e.policy ? `${scope.base}/policies/${e.policy.id}` : undefined} /> },
              { header: "Account", cell: (e) => <IdLink id={e.account?.id} href={e.account?.id.startsWith("acc_") ? `${scope.base}/accounts/${e.account.id}` : undefined} /> },
              {
                header: "Note",
                cell: (e) =>
                  e.reference || e.note || e.sponsoredOperation ? (
                    <span className="text-xs text-slate-600">
                      {e.note}
                      {e.reference && <Mono value={e.reference} />}
                      {e.sponsoredOperation && <span className="font-mono">{e.sponsoredOperation.id}</span>}
                    </span>
                  ) : (
                    <span className="text-slate-400">—</span>
                  ),
              },
            ]}
          />
          <Pagination total={ledger.data.total} {...page} href={pageHref(path, query)} />
        </>
      )}
    </>
  );
}
