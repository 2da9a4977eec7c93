import { CodeBlock } from "@/components/code";
import { ActionForm, SubmitButton, TextInput } from "@/components/form";
import { Card, EmptyState, PageHeader } from "@/components/page";
import { SearchBox } from "@/components/search";
import { Pagination, pageHref, Table } from "@/components/table";
import { Time } from "@/components/time";
import { accountsOfPlayers } from "@/lib/account-records/queries";
import { submitOperation } from "@/lib/dashboard/actions";
import { scopeOf, type ScopeParams } from "@/lib/dashboard/context";
import { apiBase, exampleKey } from "@/lib/dashboard/examples";
import { pageParams } from "@/lib/dashboard/paging";
import { getDb } from "@/lib/db/client";
import { unixSeconds } from "@/lib/http/resource";
import { searchPlayers } from "@/lib/players/service";

export const metadata = { title: "Players" };

export default async function PlayersPage({ params, searchParams }: { params: ScopeParams; searchParams: Promise<Record<string, string | undefined>> }) {
  const scope = await scopeOf(params);
  const query = await searchParams;
  const page = pageParams(query);
  const db = await getDb();
  const { rows, total } = await searchPlayers(db, scope.ctx, { q: query.q, ...page });
  const accounts = await accountsOfPlayers(db, scope.ctx, rows.map((p) => p.id));
  const create = submitOperation.bind(null, { projectId: scope.project.id, mode: scope.mode, operationId: "createPlayer", redirectTo: "/players/{id}" });
  return (
    <>
      <PageHeader title="Players" description="Each player of your game, with one smart account per chain." />
      <div className="mb-4">
        <SearchBox placeholder="Search by id, name or email" defaultValue={query.q} />
      </div>
      {total === 0 && !query.q ? (
        <EmptyState title="No players yet">
          <p>Create your first player from your server:</p>
          <CodeBlock code={`curl ${await apiBase()}/v1/players -u ${await exampleKey(scope.ctx)}: -d name=Alice`} />
          <p>or with the form below.</p>
        </EmptyState>
      ) : total === 0 ? (
        <EmptyState title={`No player matches “${query.q}”`} />
      ) : (
        <>
          <Table
            rows={rows}
            rowKey={(p) => p.id}
            rowHref={(p) => `${scope.base}/players/${p.id}`}
            columns={[
              { header: "Player", cell: (p) => p.name || p.id },
              { header: "Email", cell: (p) => p.email ?? "—" },
              { header: "Accounts", cell: (p) => accounts.get(p.id)?.length ?? 0 },
              { header: "Id", cell: (p) => <span className="font-mono text-xs">{p.id}</span> },
              { header: "Created", cell: (p) => <Time seconds={unixSeconds(p.createdAt)} /> },
            ]}
          />
          <Pagination total={total} {...page} href={pageHref(`${scope.base}/players`, query)} />
        </>
      )}
      <Card title="New player" className="mt-6">
        <ActionForm action={create} className="grid gap-4 sm:grid-cols-3">
          <TextInput label="Name" name="name" placeholder="Alice" />
          <TextInput label="Email" name="email" type="email" />
          <TextInput label="Description" name="description" />
          <div className="sm:col-span-3">
            <SubmitButton>Create player</SubmitButton>
          </div>
        </ActionForm>
      </Card>
    </>
  );
}
