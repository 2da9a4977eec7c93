import Link from "next/link";
import { ActionButton } from "@/components/action-button";
import { Badge } from "@/components/badge";
import { ActionForm, SubmitButton } from "@/components/form";
import { Card, EmptyState, PageHeader } from "@/components/page";
import { Pagination, pageHref, Table } from "@/components/table";
import { Time } from "@/components/time";
import { submitOperation } from "@/lib/dashboard/actions";
import { scopeOf, type ScopeParams } from "@/lib/dashboard/context";
import { saveWebhookAction, sendTestEventAction } from "@/lib/dashboard/webhooks";
import { pageParams } from "@/lib/dashboard/paging";
import { getDb } from "@/lib/db/client";
import { unixSeconds } from "@/lib/http/resource";
import { INTENT_TOPICS } from "@/lib/deliveries/topics";
import { listDeliveries, webhookOf } from "@/lib/webhooks/service";
import { WebhookEndpoint } from "./webhook-secret";

export const metadata = { title: "Webhooks" };

export default async function WebhooksPage({ params, searchParams }: { params: ScopeParams; searchParams: Promise<Record<string, string | undefined>> }) {
  const scope = await scopeOf(params);
  const query = await searchParams;
  const page = pageParams(query);
  const db = await getDb();
  const [url, deliveries] = await Promise.all([webhookOf(db, scope.ctx), listDeliveries(db, scope.ctx, page)]);
  const target = { projectId: scope.project.id, mode: scope.mode };
  const save = saveWebhookAction.bind(null, scope.project.id, scope.mode);
  const remove = submitOperation.bind(null, { ...target, operationId: "removeWebhook" });
  return (
    <>
      <PageHeader
        title="Webhooks"
        description={
          <>
            Your endpoint receives {INTENT_TOPICS.map((t) => <code key={t} className="mx-0.5 text-xs">{t}</code>)} as JSON POSTs with two signatures, check either:{" "}
            <code className="text-xs">openfort-signature</code>, the HMAC-SHA256 of the body with your {scope.mode} secret key, which the official SDK&apos;s{" "}
            <code className="text-xs">constructWebhookEvent</code> checks; and the Standard Webhooks headers <code className="text-xs">webhook-id</code> (the event&apos;s id, the same on every retry),{" "}
            <code className="text-xs">webhook-timestamp</code> and <code className="text-xs">webhook-signature</code>, signed with this endpoint&apos;s own signing secret (any Standard Webhooks library
            verifies them and refuses replays). Failed deliveries are retried with backoff for about three days; every attempt is in the{" "}
            <Link className="text-indigo-700 hover:underline" href={`${scope.base}/subscriptions/logs`}>
              delivery log
            </Link>
            .
          </>
        }
      />
      <Card title={`${scope.mode === "test" ? "Test" : "Live"} endpoint`}>
        <WebhookEndpoint save={save} url={url} projectId={scope.project.id} mode={scope.mode}>
          <ActionButton action={sendTestEventAction.bind(null, scope.project.id, scope.mode)} label="Send test event" pendingLabel="Sending…" refresh className="flex flex-wrap items-center gap-3" />
          <ActionForm action={remove} className="ml-auto">
            <SubmitButton variant="secondary" confirm="Stop sending events to this endpoint?">
              Remove endpoint
            </SubmitButton>
          </ActionForm>
        </WebhookEndpoint>
      </Card>
      <h2 className="mb-2 text-sm font-semibold">Recent deliveries</h2>
      {deliveries.total === 0 ? (
        <EmptyState title="No deliveries yet">
          <p>{url ? "Send a test event, or create a transaction intent: each state change is delivered here." : "Set an endpoint URL above, then send a test event."}</p>
        </EmptyState>
      ) : (
        <>
          <Table
            rows={deliveries.rows}
            rowKey={(d) => d.id}
            columns={[
              { header: "Event", cell: (d) => <code className="text-xs">{d.topic}</code> },
              { header: "Status", cell: (d) => (d.status === "success" ? <Badge tone="green">{d.responseStatus}</Badge> : <Badge tone="red">{d.responseStatus ?? "no answer"}</Badge>) },
              { header: "Attempt", cell: (d) => d.attempt },
              { header: "Object", cell: (d) => <span className="font-mono text-xs">{d.objectId}</span> },
              { header: "Error", cell: (d) => d.error ?? "—", className: "max-w-xs truncate" },
              { header: "Time", cell: (d) => `${d.durationMs} ms` },
              { header: "Sent", cell: (d) => <Time seconds={unixSeconds(d.createdAt)} /> },
            ]}
          />
          <Pagination total={deliveries.total} {...page} href={pageHref(`${scope.base}/webhooks`, query)} />
        </>
      )}
    </>
  );
}
