import Link from "next/link";
import { Badge } from "@/components/badge";
import { CodeBlock } from "@/components/code";
import { ActionForm, SubmitButton } from "@/components/form";
import { Card, EmptyState, PageHeader } from "@/components/page";
import { AddTriggerForm, CreateSubscriptionForm, SendTestForm } from "@/components/subscriptions-forms";
import { Pagination, pageHref, Table } from "@/components/table";
import { Time } from "@/components/time";
import { scopeOf, type ScopeParams } from "@/lib/dashboard/context";
import { apiBase, exampleKey } from "@/lib/dashboard/examples";
import { readOperation } from "@/lib/dashboard/operations";
import { pageParams } from "@/lib/dashboard/paging";
import { addTriggerAction, createSubscriptionAction, deleteSubscriptionAction, deleteTriggerAction, enableTriggerAction, sendTestAction } from "@/lib/dashboard/subscriptions";
import { TOPICS } from "@/lib/deliveries/topics";
import { getSubscriptions } from "@/lib/subscriptions/operations";

export const metadata = { title: "Subscriptions" };

type Subscription = Awaited<ReturnType<typeof getSubscriptions.run>>["data"][number];
type Trigger = Subscription["triggers"][number];

/** A trigger's health: enabled, failing since when, or disabled (why, since when) with its "Re-enable". */
function TriggerStatus({ trigger, enable }: { trigger: Trigger; enable: Parameters<typeof ActionForm>[0]["action"] }) {
  if (trigger.status === "disabled") {
    return (
      <div className="space-y-1" data-testid="trigger-disabled">
        <Badge tone="red">disabled</Badge>
        <p className="max-w-xs whitespace-normal text-xs text-rose-800">
          {trigger.disabledAt && (
            <>
              Disabled <Time seconds={trigger.disabledAt} />:{" "}
            </>
          )}
          {trigger.disabledReason ?? "every delivery failed"}. No more attempts until you re-enable it (a successful redelivery does too).
        </p>
        <ActionForm action={enable} className="space-y-1">
          <SubmitButton variant="secondary">Re-enable</SubmitButton>
        </ActionForm>
      </div>
    );
  }
  if (trigger.failingSince) {
    return (
      <span title="Deliveries to this target have failed since then; after three days of failures it is disabled.">
        <Badge tone="amber">failing</Badge> <span className="text-xs text-slate-500">since <Time seconds={trigger.failingSince} /></span>
      </span>
    );
  }
  return <Badge tone="green">enabled</Badge>;
}

export default async function SubscriptionsPage({ params, searchParams }: { params: ScopeParams; searchParams: Promise<Record<string, string | undefined>> }) {
  const scope = await scopeOf(params);
  const query = await searchParams;
  const page = pageParams(query);
  const list = await readOperation(scope.ctx, getSubscriptions, { ...page });
  const target = { projectId: scope.project.id, mode: scope.mode };
  const logs = `${scope.base}/subscriptions/logs`;

  return (
    <>
      <PageHeader
        title="Subscriptions"
        description={
          <>
            A subscription sends every event of its topic to its triggers (webhook URLs) as a signed JSON POST: <code className="text-xs">openfort-signature</code> (the SDK&apos;s{" "}
            <code className="text-xs">constructWebhookEvent</code> checks it with your secret key) and the Standard Webhooks headers <code className="text-xs">webhook-id</code>,{" "}
            <code className="text-xs">webhook-timestamp</code>, <code className="text-xs">webhook-signature</code> (signed with the trigger&apos;s own secret). A failed delivery is retried for about
            three days; a target that fails all that time is disabled.
          </>
        }
        actions={
          <Link href={logs} className="text-sm font-medium text-indigo-700 hover:underline">
            Delivery log →
          </Link>
        }
      />
      <Card title="New subscription">
        <CreateSubscriptionForm action={createSubscriptionAction.bind(null, target)} topics={TOPICS} />
      </Card>
      <Card title="Send a test event to a URL">
        <SendTestForm action={sendTestAction.bind(null, target, null)} withUrl />
      </Card>
      {list.total === 0 ? (
        <EmptyState title="No subscriptions yet">
          <p>Create one above, or from your server:</p>
          <CodeBlock
            code={`curl ${await apiBase()}/v1/subscriptions -u ${await exampleKey(scope.ctx)}: \\\n  -d topic=transaction_intent.successful \\\n  -d "triggers[0][target]=https://example.com/webhooks/wallets" -d "triggers[0][type]=webhook"`}
          />
        </EmptyState>
      ) : (
        <>
          {list.data.map((sub) => (
            <Card
              key={sub.id}
              title={
                <span className="flex flex-wrap items-center gap-2">
                  <code className="text-sm">{sub.topic}</code>
                  <span className="font-mono text-xs font-normal text-slate-500">{sub.id}</span>
                  <span className="text-xs font-normal text-slate-500">
                    created <Time seconds={sub.createdAt} />
                  </span>
                </span>
              }
              actions={
                <div className="flex items-start gap-2" data-testid={`subscription-actions-${sub.id}`}>
                  <Link href={`${logs}?subscription=${sub.id}`} className="pt-1.5 text-sm text-indigo-700 hover:underline">
                    Deliveries
                  </Link>
                  <SendTestForm action={sendTestAction.bind(null, target, sub.id)} />
                  <ActionForm action={deleteSubscriptionAction.bind(null, target, sub.id)}>
                    <SubmitButton variant="danger" confirm={`Delete this ${sub.topic} subscription and its triggers?`}>
                      Delete
                    </SubmitButton>
                  </ActionForm>
                </div>
              }
            >
              <section aria-label={`Subscription ${sub.id}`} className="space-y-4">
                {sub.triggers.length === 0 ? (
                  <p className="text-sm text-slate-500">No triggers: add a target below.</p>
                ) : (
                  <Table
                    rows={sub.triggers}
                    rowKey={(t) => t.id}
                    columns={[
                      {
                        header: "Target",
                        cell: (t) => (
                          <div className="space-y-0.5">
                            <div className="whitespace-normal break-all font-mono text-xs">{t.target}</div>
                            <Link className="font-mono text-xs text-indigo-700 hover:underline" href={`${logs}?trigger=${t.id}`} title="This trigger's deliveries">
                              {t.id}
                            </Link>
                          </div>
                        ),
                      },
                      { header: "Status", cell: (t) => <TriggerStatus trigger={t} enable={enableTriggerAction.bind(null, target, sub.id, t.id)} /> },
                      { header: "Created", cell: (t) => <Time seconds={t.createdAt} /> },
                      {
                        header: "",
                        cell: (t) => (
                          <ActionForm action={deleteTriggerAction.bind(null, target, sub.id, t.id)}>
                            <SubmitButton variant="secondary" confirm={`Stop sending to ${t.target}?`}>
                              Remove
                            </SubmitButton>
                          </ActionForm>
                        ),
                      },
                    ]}
                  />
                )}
                <AddTriggerForm action={addTriggerAction.bind(null, target, sub.id)} />
              </section>
            </Card>
          ))}
          <Pagination total={list.total} {...page} href={pageHref(`${scope.base}/subscriptions`, query)} />
        </>
      )}
    </>
  );
}
