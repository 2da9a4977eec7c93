import { Badge } from "@/components/badge";
import { ActionForm, SubmitButton, TextInput } from "@/components/form";
import { Card, EmptyState, PageHeader } from "@/components/page";
import { Pagination, pageHref, Table } from "@/components/table";
import { Time } from "@/components/time";
import { submitOperation } from "@/lib/dashboard/actions";
import { scopeOf, type ScopeParams } from "@/lib/dashboard/context";
import { pageParams } from "@/lib/dashboard/paging";
import { getDb } from "@/lib/db/client";
import { unixSeconds } from "@/lib/http/resource";
import { INTENT_TOPICS } from "@/lib/deliveries/topics";
import { listDeliveries, webhookOf } from "@/lib/webhooks/service";
import { SendTestEvent } from "./test-event";

export const metadata = { title: "Webhooks" };

export default async function WebhooksPage({ params, searchParams }: { params: ScopeParams; searchParams: Promise<Record<string, string | undefined>> }) {
  const scope = await scopeOf(params);
  const query = await searchParams;
  const page = pageParams(query);
  const db = await getDb();
  const [url, deliveries] = await Promise.all([webhookOf(db, scope.ctx), listDeliveries(db, scope.ctx, page)]);
  const target = { projectId: scope.project.id, mode: scope.mode };
  const save = submitOperation.bind(null, { ...target, operationId: "updateWebhook" });
  const remove = submitOperation.bind(null, { ...target, operationId: "removeWebhook" });
  return (
    <>
      <PageHeader
        title="Webhooks"
        description={
          <>
            Your endpoint receives {INTENT_TOPICS.map((t) => <code key={t} className="mx-0.5 text-xs">{t}</code>)} as signed JSON POSTs (the <code className="text-xs">openfort-signature</code> header is the
            HMAC-SHA256 of the body with your {scope.mode} secret key; the official SDK&apos;s <code className="text-xs">constructWebhookEvent</code> checks it). Failed deliveries are retried with backoff.
          </>
        }
      />
      <Card title={`${scope.mode === "test" ? "Test" : "Live"} endpoint`}>
        <ActionForm action={save} className="flex flex-col gap-3 sm:flex-row sm:items-end">
          <div className="flex-1">
            <TextInput key={url ?? ""} label="URL" name="url" type="url" required defaultValue={url ?? ""} placeholder="https://example.com/webhooks/wallets" />
          </div>
          <div className="sm:pb-0.5">
            <SubmitButton>{url ? "Update" : "Save"}</SubmitButton>
          </div>
        </ActionForm>
        {url && (
          <div className="mt-4 flex flex-wrap items-center gap-3 border-t border-slate-100 pt-4">
            <SendTestEvent projectId={scope.project.id} mode={scope.mode} />
            <ActionForm action={remove} className="ml-auto">
              <SubmitButton variant="secondary" confirm="Stop sending events to this endpoint?">
                Remove endpoint
              </SubmitButton>
            </ActionForm>
          </div>
        )}
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
