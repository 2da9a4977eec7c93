import Link from "next/link";
import { accountTypeInfo, responseAccountType } from "@/lib/account-records/types";
import { Badge } from "@/components/badge";
import { CopyButton } from "@/components/code";
import { Inventory } from "@/components/inventory";
import { ActionForm, SubmitButton } from "@/components/form";
import { RecentIntents } from "@/components/intent-list";
import { Card, Definitions, PageHeader } from "@/components/page";
import { SessionsTable } from "@/components/sessions-table";
import { Time } from "@/components/time";
import { getAccount } from "@/lib/accounts/service";
import { submitOperation } from "@/lib/dashboard/actions";
import { chainLabel } from "@/lib/dashboard/chains";
import { projectScope } from "@/lib/dashboard/context";
import { revocationPolicies, sessionItems, SESSIONS_PAGE } from "@/lib/dashboard/sessions";
import { found } from "@/lib/dashboard/operations";
import { getDb } from "@/lib/db/client";
import { unixSeconds } from "@/lib/http/resource";
import { listIntents } from "@/lib/intents/service";

export const metadata = { title: "Account" };

export default async function AccountPage({
  params,
  searchParams,
}: {
  params: Promise<{ projectId: string; mode: string; id: string }>;
  searchParams: Promise<Record<string, string | undefined>>;
}) {
  const { projectId, mode, id } = await params;
  const sessionsSkip = Math.max(0, Number((await searchParams).sessionsSkip) || 0);
  const scope = await projectScope(projectId, mode);
  const db = await getDb();
  const account = await found(getAccount(db, scope.ctx, id));
  const [intents, sessions] = await Promise.all([
    listIntents(db, scope.ctx, { account: [account.id], limit: 10, skip: 0 }),
    sessionItems(db, scope.ctx, { player: account.playerId, account: account.id, skip: sessionsSkip }),
  ]);
  const policies = await revocationPolicies(db, scope.ctx, [account.chainId]);
  const revoke = submitOperation.bind(null, { projectId: scope.project.id, mode: scope.mode, operationId: "revokeSession" });
  const sync = submitOperation.bind(null, { projectId: scope.project.id, mode: scope.mode, operationId: "syncAccount", params: { id: account.id } });
  const hex = (value: string) => (
    <span className="inline-flex flex-wrap items-center gap-2">
      <code className="break-all font-mono text-xs">{value}</code>
      <CopyButton value={value} />
    </span>
  );
  return (
    <>
      <PageHeader title="Account" description={account.id} />
      <Card title="Details">
        <Definitions
          items={[
            ["Address", hex(account.address)],
            ["Chain", chainLabel(account.chainId)],
            ["Player", <Link key="p" href={`${scope.base}/players/${account.playerId}`} className="font-mono text-xs text-indigo-700 hover:underline">{account.playerId}</Link>],
            ["Owner", hex(account.ownerAddress)],
            ["Pending owner", account.pendingOwnerAddress ? hex(account.pendingOwnerAddress) : null],
            ["Custody", account.custodial ? "custodial (the service holds the owner key)" : "the owner's own wallet"],
            ["Deployed", account.deployed ? <Badge key="d" tone="green">deployed</Badge> : <Badge key="d" tone="amber">counterfactual: deployed with its first transaction</Badge>],
            ["Type", `${accountTypeInfo(account.accountType)?.label ?? account.accountType} (${account.accountType}, shown by the API as ${responseAccountType(account.accountType)})`],
            // ERC6551V1: whoever holds this token controls the account (Owner is the holder at the last sync).
            ["Token", account.tokenContract ? <span key="tok" className="inline-flex flex-wrap items-center gap-2 break-all">#{account.tokenId} of {hex(account.tokenContract)}</span> : null],
            ["Created", <Time key="t" seconds={unixSeconds(account.createdAt)} />],
          ]}
        />
        <ActionForm action={sync} className="mt-4">
          <SubmitButton variant="secondary">Sync with chain</SubmitButton>
        </ActionForm>
      </Card>
      <Card title="Inventory">
        <Inventory ctx={scope.ctx} subject={{ account: account.id, chainId: account.chainId }} />
      </Card>
      <Card title="Session keys">
        <SessionsTable
          sessions={sessions.items}
          total={sessions.total}
          skip={sessionsSkip}
          limit={SESSIONS_PAGE}
          pageHref={(skip) => `${scope.base}/accounts/${account.id}${skip > 0 ? `?sessionsSkip=${skip}` : ""}`}
          base={scope.base}
          policies={policies}
          revoke={revoke}
        />
      </Card>
      <Card title="Recent transaction intents">
        <RecentIntents intents={intents.rows} base={scope.base} />
      </Card>
    </>
  );
}
