import Link from "next/link";
import { Badge } from "@/components/badge";
import { CodeBlock } from "@/components/code";
import { Card, Definitions, PageHeader } from "@/components/page";
import { RedeliverForm } from "@/components/subscriptions-forms";
import { ObjectLink } from "@/components/subscriptions-object-link";
import { Time } from "@/components/time";
import { projectScope } from "@/lib/dashboard/context";
import { readOperation } from "@/lib/dashboard/operations";
import { redeliverAction } from "@/lib/dashboard/subscriptions";
import { getSubscriptionLog } from "@/lib/subscriptions/operations";

export const metadata = { title: "Delivery" };

/** One delivery attempt: where it went, which event (webhook-id), what the receiver answered; and "Redeliver". */
export default async function DeliveryPage({ params }: { params: Promise<{ projectId: string; mode: string; logId: string }> }) {
  const { projectId, mode, logId } = await params;
  const scope = await projectScope(projectId, mode);
  const log = await readOperation(scope.ctx, getSubscriptionLog, {}, { id: logId });
  const logs = `${scope.base}/subscriptions/logs`;
  const body = log.responseBody ?? null;

  return (
    <>
      <PageHeader
        title="Delivery"
        description={
          <>
            Attempt #{log.attempt} of event <code className="text-xs">{log.event ?? "—"}</code> ({log.reason}). We keep what the receiver answered; the request was the event&apos;s JSON body with its
            signature headers.
          </>
        }
        actions={
          <Link href={logs} className="text-sm font-medium text-indigo-700 hover:underline">
            ← Delivery log
          </Link>
        }
      />
      <Card title={<span className="flex items-center gap-2">Attempt <span className="font-mono text-xs font-normal">{log.id}</span> <Badge tone={log.status === "success" ? "green" : "red"}>{log.status}</Badge></span>}>
        <Definitions
          items={[
            ["Time", <Time key="t" seconds={log.createdAt} />],
            ["Topic", <code key="topic" className="text-xs">{log.topic}</code>],
            ["URL", <span key="url" className="font-mono text-xs">{log.url}</span>],
            ["webhook-id (event)", log.event ? <span className="font-mono text-xs">{log.event}</span> : null],
            ["Subscription", log.subscription ? <Link className="font-mono text-xs text-indigo-700 hover:underline" href={`${logs}?subscription=${log.subscription}`}>{log.subscription}</Link> : "— (project webhook or a test to a URL)"],
            ["Trigger", log.trigger ? <Link className="font-mono text-xs text-indigo-700 hover:underline" href={`${logs}?trigger=${log.trigger}`}>{log.trigger}</Link> : null],
            ["Related object", <ObjectLink key="o" base={scope.base} id={log.relatedObject} />],
            ["Request id", log.requestID ? <Link className="font-mono text-xs text-indigo-700 hover:underline" href={`${logs}?requestID=${encodeURIComponent(log.requestID)}`}>{log.requestID}</Link> : null],
            ["Attempt", `#${log.attempt} (${log.reason})`],
            ["Response status", log.responseStatus === null ? "no answer" : String(log.responseStatus)],
            ["Duration", `${log.durationMs} ms`],
            ["Error", log.error ? <span className="text-rose-700">{log.error}</span> : null],
          ]}
        />
      </Card>
      <Card title="Response body (first 1 KiB)">{body ? <CodeBlock code={body} /> : <p className="text-sm text-slate-500">Empty.</p>}</Card>
      {log.event && (
        <Card title="Redeliver">
          <p className="mb-3 text-sm text-slate-600">Sends the same event (same body and webhook-id) to the same target now, as attempt #{log.attempt + 1} or later.</p>
          <RedeliverForm action={redeliverAction.bind(null, { projectId: scope.project.id, mode: scope.mode }, log.id)} />
        </Card>
      )}
    </>
  );
}
