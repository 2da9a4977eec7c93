import { CodeBlock } from "@/components/code";
import { IntentsTable } from "@/components/intents-table";
import { IntentForm } from "@/components/intent-form";
import { Card, EmptyState, PageHeader } from "@/components/page";
import { SearchBox } from "@/components/search";
import { SwapForm } from "@/components/swap-form";
import { supportedChains } from "@/lib/chain/registry";
import { submitOperation } from "@/lib/dashboard/actions";
import { scopeOf, type ScopeParams } from "@/lib/dashboard/context";
import { projectContracts } from "@/lib/dashboard/contracts";
import { apiBase, exampleKey } from "@/lib/dashboard/examples";
import { listIntentItems } from "@/lib/dashboard/intents";
import { readOperation } from "@/lib/dashboard/operations";
import { getDb } from "@/lib/db/client";
import { localExchange } from "@/lib/exchange/deployment";
import { INTENT_STATES } from "@/lib/intents/search";
import { searchPlayers } from "@/lib/players/service";
import { listPolicies } from "@/lib/policies/operations";

export const metadata = { title: "Transaction intents" };

const filterClass = "rounded-md border border-slate-300 bg-white px-2 py-1.5 text-sm";

export default async function IntentsPage({ params, searchParams }: { params: ScopeParams; searchParams: Promise<Record<string, string | undefined>> }) {
  const scope = await scopeOf(params);
  const { filters, rows, total } = await listIntentItems(scope.project.id, scope.mode, await searchParams);
  const [policies, contracts, players] = await Promise.all([
    readOperation(scope.ctx, listPolicies, { limit: 100 }),
    projectContracts(scope.ctx),
    searchPlayers(await getDb(), scope.ctx, { limit: 100, skip: 0 }),
  ]);
  const send = submitOperation.bind(null, { projectId: scope.project.id, mode: scope.mode, operationId: "createTransactionIntent", redirectTo: "/intents/{id}" });
  const quote = submitOperation.bind(null, { projectId: scope.project.id, mode: scope.mode, operationId: "quoteSwap" });
  const swap = submitOperation.bind(null, { projectId: scope.project.id, mode: scope.mode, operationId: "createSwap", redirectTo: "/intents/{id}" });
  // Chains with an exchange: their configured router, or a local chain's own Uniswap v2 with its demo tokens.
  const demoTokens = localExchange().tokens.map((t) => ({ address: t.address, symbol: t.symbol }));
  const swapChains = supportedChains()
    .filter((c) => c.livemode === scope.ctx.livemode && (c.router || c.dev))
    .map((c) => ({ chainId: c.chainId, name: c.name, tokens: c.router ? [] : demoTokens }));
  const chains = Object.fromEntries(supportedChains().filter((c) => c.livemode === scope.ctx.livemode).map((c) => [c.chainId, { name: c.name, symbol: c.nativeCurrency.symbol }]));
  const filtered = Object.entries(filters).some(([k, v]) => k !== "skip" && v !== undefined && v !== "");
  return (
    <>
      <PageHeader title="Transaction intents" description="Every transaction your players' accounts sent, from creation to confirmation: pending → broadcast → successful or failed. The list refreshes by itself." />
      <div className="mb-4">
        <SearchBox placeholder="Search by intent, account, transaction or userOperation hash" defaultValue={filters.q}>
          <select name="state" aria-label="Status" defaultValue={filters.state ?? ""} className={filterClass}>
            <option value="">Any status</option>
            {INTENT_STATES.map((s) => (
              <option key={s} value={s}>
                {s.replace("_", " ")}
              </option>
            ))}
          </select>
          <select name="policy" aria-label="Policy" defaultValue={filters.policy ?? ""} className={filterClass}>
            <option value="">Any policy</option>
            {policies.data.map((p) => (
              <option key={p.id} value={p.id}>
                {p.name}
              </option>
            ))}
          </select>
          <select name="chainId" aria-label="Chain" defaultValue={filters.chainId ?? ""} className={filterClass}>
            <option value="">Any chain</option>
            {Object.entries(chains).map(([id, c]) => (
              <option key={id} value={id}>
                {c.name}
              </option>
            ))}
          </select>
          {filters.player && <input type="hidden" name="player" value={filters.player} />}
        </SearchBox>
        {filters.player && (
          <p className="mt-2 text-sm text-slate-600">
            Player <span className="font-mono text-xs">{filters.player}</span> only. <a className="text-indigo-700 hover:underline" href={`${scope.base}/intents`}>Show all</a>
          </p>
        )}
      </div>
      <IntentsTable
        projectId={scope.project.id}
        mode={scope.mode}
        base={scope.base}
        filters={filters}
        initial={{ rows, total }}
        chains={chains}
        empty={
          filtered ? (
            <EmptyState title="No intent matches these filters">
              <p>
                <a className="text-indigo-700 hover:underline" href={`${scope.base}/intents`}>
                  Clear the filters
                </a>
              </p>
            </EmptyState>
          ) : (
            <EmptyState title="No transaction intents yet">
              <p>Create one from your server: a call to a registered contract from a player&apos;s account, sponsored by a policy. It shows up here by itself.</p>
              <CodeBlock
                code={`curl ${await apiBase()}/v1/transaction_intents -u ${await exampleKey(scope.ctx)}: \\\n  -d chainId=${Object.keys(chains)[0] ?? 31337} -d player=pla_… -d policy=pol_… \\\n  -d "interactions[0][contract]=con_…" -d "interactions[0][functionName]=mint" \\\n  -d "interactions[0][functionArgs][0]=0x…"`}
              />
            </EmptyState>
          )
        }
      />
      <Card title="Send a transaction" className="mt-6">
        <IntentForm
          action={send}
          contracts={contracts}
          players={players.rows.map((p) => ({ id: p.id, name: p.name || p.id }))}
          policies={policies.data.filter((p) => p.enabled && !p.deleted)}
          player={filters.player}
        />
      </Card>
      <Card title="Swap tokens" className="mt-6">
        <SwapForm
          quoteAction={quote}
          swapAction={swap}
          chains={swapChains}
          players={players.rows.map((p) => ({ id: p.id, name: p.name || p.id }))}
          policies={policies.data.filter((p) => p.enabled && !p.deleted)}
          player={filters.player}
        />
      </Card>
    </>
  );
}
