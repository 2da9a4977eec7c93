import { Badge } from "@/components/badge";
import { CodeBlock, Mono } from "@/components/code";
import { ButtonLink, EmptyState, PageHeader } from "@/components/page";
import { DeletedToggle, Pagination, pageHref, Table } from "@/components/table";
import { Time } from "@/components/time";
import { chainLabel } from "@/lib/dashboard/chains";
import { scopeOf, type ScopeParams } from "@/lib/dashboard/context";
import { apiBase, exampleKey } from "@/lib/dashboard/examples";
import { readOperation } from "@/lib/dashboard/operations";
import { deletedParams, pageParams } from "@/lib/dashboard/paging";
import { listContracts } from "@/lib/contracts/operations";

export const metadata = { title: "Contracts" };

export default async function ContractsPage({ params, searchParams }: { params: ScopeParams; searchParams: Promise<Record<string, string | undefined>> }) {
  const scope = await scopeOf(params);
  const query = await searchParams;
  const page = pageParams(query);
  const deleted = deletedParams(query);
  const list = await readOperation(scope.ctx, listContracts, { ...page, ...deleted.filter });
  return (
    <>
      <PageHeader
        title="Contracts"
        description="The contracts your players' transactions call. Registering one stores its ABI, so intents can name functions and arguments."
        actions={<ButtonLink href={`${scope.base}/contracts/new`}>Register contract</ButtonLink>}
      />
      <DeletedToggle href={`${scope.base}/contracts`} shown={deleted.shown} noun="contracts" />
      {list.total === 0 ? (
        <EmptyState title="No contracts yet">
          <p>Register one with its ABI, here or from your server:</p>
          <CodeBlock code={`curl ${await apiBase()}/v1/contracts -u ${await exampleKey(scope.ctx)}: -H "content-type: application/json" \\\n  -d '{"name":"Game","chainId":31337,"address":"0x…","abi":[…]}'`} />
        </EmptyState>
      ) : (
        <>
          <Table
            rows={list.data}
            rowKey={(c) => c.id}
            rowHref={(c) => `${scope.base}/contracts/${c.id}`}
            columns={[
              { header: "Name", cell: (c) => c.name ?? c.id },
              { header: "Address", cell: (c) => <Mono value={c.address} /> },
              { header: "Chain", cell: (c) => chainLabel(c.chainId) },
              { header: "Functions", cell: (c) => c.abi.filter((e) => e.type === "function").length },
              { header: "State", cell: (c) => (c.deleted ? <Badge tone="red">deleted</Badge> : <Badge tone="green">active</Badge>) },
              { header: "Created", cell: (c) => <Time seconds={c.createdAt} /> },
            ]}
          />
          <Pagination total={list.total} {...page} href={pageHref(`${scope.base}/contracts`, query)} />
        </>
      )}
    </>
  );
}
