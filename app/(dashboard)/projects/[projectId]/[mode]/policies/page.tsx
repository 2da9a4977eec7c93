import { PolicyState } from "@/components/badge";
import { CodeBlock } from "@/components/code";
import { ButtonLink, EmptyState, PageHeader } from "@/components/page";
import { DeletedToggle, Pagination, pageHref, Table } from "@/components/table";
import { Time } from "@/components/time";
import { chainLabel } from "@/lib/dashboard/chains";
import { scopeOf, type ScopeParams } from "@/lib/dashboard/context";
import { apiBase, exampleKey } from "@/lib/dashboard/examples";
import { readOperation } from "@/lib/dashboard/operations";
import { deletedParams, pageParams } from "@/lib/dashboard/paging";
import { listPolicies } from "@/lib/policies/operations";

export const metadata = { title: "Policies" };

export default async function PoliciesPage({ params, searchParams }: { params: ScopeParams; searchParams: Promise<Record<string, string | undefined>> }) {
  const scope = await scopeOf(params);
  const query = await searchParams;
  const page = pageParams(query);
  const deleted = deletedParams(query);
  const list = await readOperation(scope.ctx, listPolicies, { ...page, ...deleted.filter });
  return (
    <>
      <PageHeader
        title="Policies"
        description="A policy sponsors gas on one chain for the transaction intents that name it, when its rules allow every call of the intent and no limit is reached."
        actions={<ButtonLink href={`${scope.base}/policies/new`}>Create policy</ButtonLink>}
      />
      <DeletedToggle href={`${scope.base}/policies`} shown={deleted.shown} noun="policies" />
      {list.total === 0 ? (
        <EmptyState title="No policies yet">
          <p>Create a policy, add a rule saying which contract calls it sponsors, then name the policy when you create a transaction intent. From your server:</p>
          <CodeBlock code={`curl ${await apiBase()}/v1/policies -u ${await exampleKey(scope.ctx)}: \\\n  -d name="Free mints" -d chainId=31337 -d "strategy[sponsorSchema]=pay_for_user"`} />
        </EmptyState>
      ) : (
        <>
          <Table
            rows={list.data}
            rowKey={(p) => p.id}
            rowHref={(p) => `${scope.base}/policies/${p.id}`}
            columns={[
              { header: "Name", cell: (p) => p.name },
              { header: "Chain", cell: (p) => chainLabel(p.chainId) },
              { header: "Gas paid by", cell: (p) => (p.strategy.sponsorSchema === "pay_for_user" ? "you" : `player, in tokens (${p.strategy.sponsorSchema})`) },
              { header: "Rules", cell: (p) => p.policyRules.length },
              { header: "State", cell: (p) => <PolicyState policy={p} /> },
              { header: "Created", cell: (p) => <Time seconds={p.createdAt} /> },
            ]}
          />
          <Pagination total={list.total} {...page} href={pageHref(`${scope.base}/policies`, query)} />
        </>
      )}
    </>
  );
}
