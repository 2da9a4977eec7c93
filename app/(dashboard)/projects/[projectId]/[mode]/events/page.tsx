import { formatEther } from "viem";
import { ActionButton } from "@/components/action-button";
import { Badge } from "@/components/badge";
import { CodeBlock, Mono } from "@/components/code";
import { ActionForm, SubmitButton } from "@/components/form";
import { Card, EmptyState, PageHeader } from "@/components/page";
import { DeletedToggle, Pagination, pageHref, Table } from "@/components/table";
import { Time } from "@/components/time";
import { submitOperation } from "@/lib/dashboard/actions";
import { chainLabel, chainOptions } from "@/lib/dashboard/chains";
import { scopeOf, type ScopeParams } from "@/lib/dashboard/context";
import { readMonitorNow } from "@/lib/dashboard/events";
import { apiBase, exampleKey } from "@/lib/dashboard/examples";
import { readOperation } from "@/lib/dashboard/operations";
import { deletedParams, pageParams } from "@/lib/dashboard/paging";
import { getDb } from "@/lib/db/client";
import { TOPICS } from "@/lib/deliveries/topics";
import { listContracts } from "@/lib/contracts/service";
import { listDeveloperAccounts } from "@/lib/developer-accounts/service";
import { listEvents } from "@/lib/monitors/operations";
import type { EventResponse } from "@/lib/monitors/schema";
import { watchedObjects } from "@/lib/monitors/service";
import { CreateEventForm } from "./create-event-form";

export const metadata = { title: "Events" };

const STATE_TONE = { armed: "green", below: "amber", fired: "red" } as const;

/** Native balances and deposits in ETH (wei on hover); a contract's integer as it is, since its decimals are unknown. */
function Amount({ wei, native }: { wei: string | null; native: boolean }) {
  if (wei === null) return <span className="text-slate-400">—</span>;
  return <span title={`${wei} wei`}>{native ? `${formatEther(BigInt(wei))} ETH` : BigInt(wei).toLocaleString("en-US")}</span>;
}

export default async function EventsPage({ params, searchParams }: { params: ScopeParams; searchParams: Promise<Record<string, string | undefined>> }) {
  const scope = await scopeOf(params);
  const query = await searchParams;
  const page = pageParams(query);
  const deleted = deletedParams(query);
  const db = await getDb();
  const [list, contracts, accounts] = await Promise.all([
    readOperation(scope.ctx, listEvents, { ...page, ...deleted.filter }),
    listContracts(db, scope.ctx, { limit: 100, deleted: false }),
    listDeveloperAccounts(db, scope.ctx, { limit: 100, deleted: false }),
  ]);
  const watched = await watchedObjects(db, scope.ctx, list.data);
  const target = { projectId: scope.project.id, mode: scope.mode };
  const create = submitOperation.bind(null, { ...target, operationId: "createEvent" });

  const watching = (e: EventResponse) => {
    const chain = e.chainId ? <span className="text-xs text-slate-500"> on {chainLabel(e.chainId)}</span> : null;
    if (e.topic === "balance.contract") {
      const c = watched.contracts.get(e.contract?.id ?? "");
      return (
        <>
          <code className="text-xs">
            {c?.name ?? e.contract?.id}.{e.functionName}({(e.functionArgs ?? []).join(", ")})
          </code>
          {chain}
        </>
      );
    }
    if (e.topic === "balance.dev_account") {
      const a = watched.developerAccounts.get(e.developerAccount?.id ?? "");
      return (
        <>
          {a?.name ?? "Developer account"} {a && <Mono value={a.address} />}
          {chain}
        </>
      );
    }
    if (e.topic === "balance.project") return <>Sponsorship balance{chain ?? <span className="text-xs text-slate-500"> on every chain</span>}</>;
    return <span className="text-slate-400">nothing (named topic)</span>;
  };

  return (
    <>
      <PageHeader
        title="Events"
        description={
          <>
            Event definitions name a topic. The balance topics are monitors, checked every 10 seconds: when the value stays below the threshold for the given number of blocks, one{" "}
            <code className="text-xs">balance.*</code> event goes to the topic&apos;s subscriptions, and the monitor re-arms once the value is back above it.
          </>
        }
      />
      <Card title="New event">
        <CreateEventForm
          action={create}
          topics={TOPICS}
          contracts={contracts.rows.map((c) => [c.id, `${c.name ?? c.id} (${chainLabel(c.chainId)})`])}
          developerAccounts={accounts.rows.map((a) => [a.id, `${a.name ?? a.id} ${a.address}`])}
          chains={chainOptions(scope.ctx)}
        />
      </Card>
      <DeletedToggle href={`${scope.base}/events`} shown={deleted.shown} noun="events" />
      {list.total === 0 ? (
        <EmptyState title="No events yet">
          <p>Create one above, or from your server:</p>
          <CodeBlock
            code={`curl ${await apiBase()}/v1/events -u ${await exampleKey(scope.ctx)}: \\\n  -d name="Treasury low" -d topic=balance.dev_account -d developerAccount=dac_… \\\n  -d chainId=${chainOptions(scope.ctx)[0]?.[0] ?? 31337} -d threshold=100000000000000000`}
          />
        </EmptyState>
      ) : (
        <>
          <Table
            rows={list.data}
            rowKey={(e) => e.id}
            columns={[
              { header: "Name", cell: (e) => e.name },
              { header: "Topic", cell: (e) => <code className="text-xs">{e.topic}</code> },
              { header: "Watching", cell: watching },
              { header: "Threshold", cell: (e) => <Amount wei={e.threshold} native={e.topic !== "balance.contract"} /> },
              {
                header: "Current reading",
                cell: (e) =>
                  e.monitor ? (
                    <div className="space-y-0.5">
                      <Amount wei={e.monitor.value} native={e.topic !== "balance.contract"} />
                      {e.monitor.blockNumber !== null && (
                        <div className="text-xs text-slate-500">
                          block {e.monitor.blockNumber}, <Time seconds={e.monitor.checkedAt} />
                        </div>
                      )}
                      {e.monitor.error && <div className="max-w-xs truncate text-xs text-rose-700" title={e.monitor.error}>{e.monitor.error}</div>}
                    </div>
                  ) : (
                    <span className="text-slate-400">—</span>
                  ),
              },
              {
                header: "State",
                cell: (e) =>
                  e.deleted ? (
                    <Badge tone="gray">deleted</Badge>
                  ) : e.monitor ? (
                    <span title={e.monitor.state === "below" ? `below since block ${e.monitor.belowSinceBlock}` : undefined}>
                      <Badge tone={STATE_TONE[e.monitor.state]}>{e.monitor.state}</Badge>
                    </span>
                  ) : (
                    <Badge tone="blue">named</Badge>
                  ),
              },
              {
                header: "",
                cell: (e) =>
                  e.deleted ? null : (
                    <div className="flex items-start gap-2">
                      {/* Reads the monitor's value now instead of waiting for its next scheduled check. */}
                      {e.monitor && <ActionButton action={readMonitorNow.bind(null, scope.project.id, scope.mode, e.id)} label="Read now" pendingLabel="Reading…" refresh messageClassName="max-w-xs text-xs" />}
                      <ActionForm action={submitOperation.bind(null, { ...target, operationId: "deleteEvent", params: { id: e.id } })}>
                        <SubmitButton variant="danger" confirm={`Delete "${e.name}"? Its monitor stops.`}>
                          Delete
                        </SubmitButton>
                      </ActionForm>
                    </div>
                  ),
              },
            ]}
          />
          <Pagination total={list.total} {...page} href={pageHref(`${scope.base}/events`, query)} />
        </>
      )}
    </>
  );
}
