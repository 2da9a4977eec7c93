import { Badge } from "@/components/badge";
import { CodeBlock, Mono } from "@/components/code";
import { Card, EmptyState } from "@/components/page";
import { SearchBox } from "@/components/search";
import { Pagination, pageHref, Table } from "@/components/table";
import { Time } from "@/components/time";
import type { ProjectScope } from "@/lib/dashboard/context";
import { apiBase } from "@/lib/dashboard/examples";
import { readOperation } from "@/lib/dashboard/operations";
import { pageParams } from "@/lib/dashboard/paging";
import { listAuthPlayersOperation } from "@/lib/iam/player-operations";

type Identity = Awaited<ReturnType<typeof listAuthPlayersOperation.run>>["data"][number]["linkedAccounts"][number];

function LinkedIdentity({ identity }: { identity: Identity }) {
  return (
    <li className="flex flex-wrap items-center gap-1.5" data-testid={`identity-${identity.provider}`}>
      <Badge tone="blue">{identity.provider}</Badge>
      {identity.email ? <span className="text-xs">{identity.email}</span> : <Mono value={identity.externalUserId} />}
      {identity.email && identity.externalUserId !== identity.email.toLowerCase() && <Mono value={identity.externalUserId} />}
      {identity.verified ? <Badge tone="green">verified</Badge> : <Badge tone="amber">unverified</Badge>}
      {identity.disabled && <Badge tone="red">disabled</Badge>}
    </li>
  );
}

/** The mode's players who signed in (those with a linked identity), newest first, with each identity. */
export async function SignedInPlayers({ scope, query, publishableKey }: { scope: ProjectScope; query: Record<string, string | undefined>; publishableKey?: string }) {
  const page = pageParams(query);
  const email = query.email?.trim() || undefined;
  const list = await readOperation(scope.ctx, listAuthPlayersOperation, { ...page, ...(email ? { email } : {}) });
  return (
    <Card title="Players who signed in">
      <div className="mb-4">
        <SearchBox name="email" placeholder="Filter by email" defaultValue={email} />
      </div>
      {list.total === 0 && !email ? (
        <EmptyState title="No player has signed in yet">
          <p>Sign one up from your game with the publishable key:</p>
          <CodeBlock code={`curl ${await apiBase()}/iam/v1/auth/signup -u ${publishableKey ?? "$PUBLISHABLE_KEY"}: \\\n  -d email=ada@example.com -d 'password=correct horse battery' -d name=Ada`} />
        </EmptyState>
      ) : list.total === 0 ? (
        <EmptyState title={`No player has the email “${email}”`} />
      ) : (
        <>
          <Table
            rows={list.data}
            rowKey={(p) => p.id}
            rowHref={(p) => `${scope.base}/players/${p.id}`}
            columns={[
              { header: "Player", cell: (p) => p.name || p.id },
              { header: "Email", cell: (p) => p.email ?? "—" },
              {
                header: "Linked identities",
                cell: (p) => (
                  <ul className="space-y-1">
                    {p.linkedAccounts.map((identity) => (
                      <LinkedIdentity key={`${identity.provider}:${identity.externalUserId}`} identity={identity} />
                    ))}
                  </ul>
                ),
              },
              { header: "Id", cell: (p) => <span className="font-mono text-xs">{p.id}</span> },
              { header: "Created", cell: (p) => <Time seconds={p.createdAt} /> },
            ]}
          />
          <Pagination total={list.total} {...page} href={pageHref(`${scope.base}/sign-in`, query)} />
        </>
      )}
    </Card>
  );
}
