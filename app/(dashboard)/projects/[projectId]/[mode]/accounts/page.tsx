import { AccountsTable } from "@/components/accounts-table";
import { CodeBlock } from "@/components/code";
import { ButtonLink, EmptyState, PageHeader } from "@/components/page";
import { SearchBox } from "@/components/search";
import { Pagination, pageHref } from "@/components/table";
import { searchAccounts } from "@/lib/accounts/service";
import { chainOptions } from "@/lib/dashboard/chains";
import { scopeOf, type ScopeParams } from "@/lib/dashboard/context";
import { apiBase, exampleKey } from "@/lib/dashboard/examples";
import { pageParams } from "@/lib/dashboard/paging";
import { getDb } from "@/lib/db/client";

export const metadata = { title: "Accounts" };

export default async function AccountsPage({ params, searchParams }: { params: ScopeParams; searchParams: Promise<Record<string, string | undefined>> }) {
  const scope = await scopeOf(params);
  const query = await searchParams;
  const page = pageParams(query);
  const chains = chainOptions(scope.ctx);
  const chainId = chains.some(([id]) => id === query.chainId) ? Number(query.chainId) : undefined;
  const { rows, total } = await searchAccounts(await getDb(), scope.ctx, { q: query.q, chainId, ...page });
  return (
    <>
      <PageHeader
        title="Accounts"
        description="Smart accounts of your players: one address per player and chain, deployed on chain with its first transaction."
        actions={<ButtonLink href={`${scope.base}/accounts/managed`} variant="secondary">Managed accounts</ButtonLink>}
      />
      <div className="mb-4">
        <SearchBox placeholder="Search by address, owner, account or player id" defaultValue={query.q}>
          <select name="chainId" defaultValue={query.chainId ?? ""} aria-label="Chain" className="rounded-md border border-slate-300 bg-white px-2 py-1.5 text-sm">
            <option value="">All chains</option>
            {chains.map(([id, label]) => (
              <option key={id} value={id}>{label}</option>
            ))}
          </select>
        </SearchBox>
      </div>
      {total === 0 && !query.q && chainId === undefined ? (
        <EmptyState title="No accounts yet">
          <p>Create a player with an account on a chain:</p>
          <CodeBlock code={`curl ${await apiBase()}/v1/accounts -u ${await exampleKey(scope.ctx)}: -d player=pla_… -d chainId=${chains[0]?.[0] ?? 31337}`} />
        </EmptyState>
      ) : total === 0 ? (
        <EmptyState title="No account matches your search" />
      ) : (
        <>
          <AccountsTable accounts={rows} base={scope.base} showPlayer />
          <Pagination total={total} {...page} href={pageHref(`${scope.base}/accounts`, query)} />
        </>
      )}
    </>
  );
}
