import { ChainSelect } from "@/components/chain-select";
import { ActionForm, Select, SubmitButton, TextInput } from "@/components/form";
import { RecentIntents } from "@/components/intent-list";
import { Card, Definitions, PageHeader } from "@/components/page";
import { AccountsTable } from "@/components/accounts-table";
import { Inventory } from "@/components/inventory";
import { SessionsTable } from "@/components/sessions-table";
import { Time } from "@/components/time";
import { accountsOfPlayers } from "@/lib/account-records/queries";
import { ACCEPTED_ACCOUNT_TYPES, ACCOUNT_TYPES } from "@/lib/account-records/types";
import { submitOperation } from "@/lib/dashboard/actions";
import { projectScope } from "@/lib/dashboard/context";
import { revocationPolicies, sessionItems, SESSIONS_PAGE } from "@/lib/dashboard/sessions";
import { found } from "@/lib/dashboard/operations";
import { getDb } from "@/lib/db/client";
import { unixSeconds } from "@/lib/http/resource";
import { listIntents } from "@/lib/intents/service";
import { getPlayer } from "@/lib/players/service";

export const metadata = { title: "Player" };

export default async function PlayerPage({
  params,
  searchParams,
}: {
  params: Promise<{ projectId: string; mode: string; id: string }>;
  searchParams: Promise<Record<string, string | undefined>>;
}) {
  const { projectId, mode, id } = await params;
  const query = await searchParams;
  const sessionsSkip = Math.max(0, Number(query.sessionsSkip) || 0);
  const scope = await projectScope(projectId, mode);
  const db = await getDb();
  const player = await found(getPlayer(db, scope.ctx, id));
  const [accounts, intents, sessions] = await Promise.all([
    accountsOfPlayers(db, scope.ctx, [player.id]).then((m) => m.get(player.id) ?? []),
    listIntents(db, scope.ctx, { player: [player.id], limit: 10, skip: 0 }),
    sessionItems(db, scope.ctx, { player: player.id, skip: sessionsSkip }),
  ]);
  const policies = await revocationPolicies(db, scope.ctx, sessions.items.map((s) => s.chainId));
  const target = { projectId: scope.project.id, mode: scope.mode };
  const createAccount = submitOperation.bind(null, { ...target, operationId: "createAccount" });
  const remove = submitOperation.bind(null, { ...target, operationId: "deletePlayer", params: { id: player.id }, redirectTo: "/players" });
  const revoke = submitOperation.bind(null, { ...target, operationId: "revokeSession" });
  return (
    <>
      <PageHeader title={player.name || player.id} description={player.description ?? undefined} />
      <Card title="Player">
        <Definitions
          items={[
            ["Id", <span key="id" className="font-mono text-xs">{player.id}</span>],
            ["Name", player.name],
            ["Email", player.email],
            ["Metadata", player.metadata ? <code key="m" className="text-xs">{JSON.stringify(player.metadata)}</code> : null],
            ["Created", <Time key="t" seconds={unixSeconds(player.createdAt)} />],
          ]}
        />
      </Card>
      <Card title="Accounts">
        <AccountsTable accounts={accounts} base={scope.base} />
        <div className="mt-4 border-t border-slate-100 pt-4">
          <ActionForm action={createAccount} className="grid gap-4 sm:grid-cols-3">
            <input type="hidden" name="player" value={player.id} />
            <ChainSelect ctx={scope.ctx} />
            <TextInput label="External owner address" name="externalOwnerAddress" placeholder="0x… (empty: custodial)" hint="Leave empty for a custodial account whose key the service holds." />
            <Select
              label="Type"
              name="accountType"
              options={ACCEPTED_ACCOUNT_TYPES.map((type): [string, string] => [type, ACCOUNT_TYPES[type].label])}
              hint="Upgradeable (v0.6): what SDKs expect, the default. On EntryPoint v0.8: for new projects. Delegated EOA: the owner address itself becomes the account (EIP-7702). Token-bound accounts need the token below; the holder controls them."
            />
            <TextInput label="Token contract (ERC6551V1)" name="tokenContract" placeholder="0x… or con_…" />
            <TextInput label="Token id (ERC6551V1)" name="tokenId" placeholder="1" />
            <div className="self-end sm:pb-5">
              <SubmitButton>Create account</SubmitButton>
            </div>
          </ActionForm>
        </div>
      </Card>
      {accounts.length > 0 && (
        <Card title="Inventory">
          <div className="space-y-6">
            {accounts.map((a) => (
              <Inventory key={a.id} ctx={scope.ctx} subject={{ player: player.id, chainId: a.chainId }} />
            ))}
          </div>
        </Card>
      )}
      <Card title="Session keys">
        <SessionsTable
          sessions={sessions.items}
          total={sessions.total}
          skip={sessionsSkip}
          limit={SESSIONS_PAGE}
          pageHref={(skip) => `${scope.base}/players/${player.id}${skip > 0 ? `?sessionsSkip=${skip}` : ""}`}
          base={scope.base}
          policies={policies}
          revoke={revoke}
        />
      </Card>
      <Card
        title="Recent transaction intents"
        actions={
          <a className="text-sm text-indigo-700 hover:underline" href={`${scope.base}/intents?player=${player.id}`}>
            All, or send a transaction
          </a>
        }
      >
        <RecentIntents intents={intents.rows} base={scope.base} />
      </Card>
      <Card title="Danger zone">
        <ActionForm action={remove}>
          <SubmitButton variant="danger" confirm={`Delete player ${player.name || player.id}? Its accounts stay on chain.`}>
            Delete player
          </SubmitButton>
        </ActionForm>
      </Card>
    </>
  );
}
