import Link from "next/link";
import { Badge } from "@/components/badge";
import { Select, TextInput } from "@/components/form";
import { EmptyState, ErrorMessage, PageHeader, buttonClass } from "@/components/page";
import { RedeliverForm } from "@/components/subscriptions-forms";
import { ObjectLink } from "@/components/subscriptions-object-link";
import { Pagination, pageHref, Table } from "@/components/table";
import { Time } from "@/components/time";
import { scopeOf, type ScopeParams } from "@/lib/dashboard/context";
import { runOperation } from "@/lib/dashboard/operations";
import { pageParams } from "@/lib/dashboard/paging";
import { redeliverAction } from "@/lib/dashboard/subscriptions";
import { TOPICS } from "@/lib/deliveries/topics";
import { listSubscriptionLogs } from "@/lib/subscriptions/operations";

export const metadata = { title: "Delivery log" };

/** The filters the log takes, as the API names them; the page's query string carries them. */
const FILTERS = ["status", "topic", "subscription", "trigger", "object", "requestID"] as const;

export default async function DeliveryLogPage({ params, searchParams }: { params: ScopeParams; searchParams: Promise<Record<string, string | undefined>> }) {
  const scope = await scopeOf(params);
  const query = await searchParams;
  const page = pageParams(query);
  const filters = Object.fromEntries(FILTERS.flatMap((f) => (query[f]?.trim() ? [[f, query[f]!.trim()]] : [])));
  const filtered = Object.keys(filters).length > 0;
  const outcome = await runOperation(scope.ctx, listSubscriptionLogs, { ...page, ...filters });
  const target = { projectId: scope.project.id, mode: scope.mode };
  const path = `${scope.base}/subscriptions/logs`;

  return (
    <>
      <PageHeader
        title="Delivery log"
        description={
          <>
            Every attempt to deliver an event: to your subscriptions&apos; triggers and to the project <Link className="text-indigo-700 hover:underline" href={`${scope.base}/webhooks`}>webhook</Link>.
            Retries of one event share its <code className="text-xs">webhook-id</code>, so your receiver can tell a redelivery from a new event.
          </>
        }
        actions={
          <Link href={`${scope.base}/subscriptions`} className="text-sm font-medium text-indigo-700 hover:underline">
            ← Subscriptions
          </Link>
        }
      />
      <form method="get" action={path} aria-label="Filters" className="mb-4 grid gap-3 rounded-lg border border-slate-200 bg-white p-4 shadow-sm sm:grid-cols-3 lg:grid-cols-6">
        <Select label="Status" name="status" defaultValue={query.status ?? ""} options={[["", "Any"], "success", "failed"]} />
        <Select label="Topic" name="topic" defaultValue={query.topic ?? ""} options={[["", "Any"], ...TOPICS]} />
        <TextInput label="Subscription" name="subscription" defaultValue={query.subscription ?? ""} placeholder="sub_…" />
        <TextInput label="Trigger" name="trigger" defaultValue={query.trigger ?? ""} placeholder="tri_…" />
        <TextInput label="Object" name="object" defaultValue={query.object ?? ""} placeholder="tin_…" />
        <TextInput label="Request id" name="requestID" defaultValue={query.requestID ?? ""} placeholder="req_…" />
        <div className="flex gap-2 sm:col-span-3 lg:col-span-6">
          <button type="submit" className={buttonClass("primary")}>
            Filter
          </button>
          {filtered && (
            <Link href={path} className={buttonClass("secondary")}>
              Clear
            </Link>
          )}
        </div>
      </form>
      {!outcome.ok ? (
        <ErrorMessage>{outcome.error.message}</ErrorMessage>
      ) : outcome.data.total === 0 ? (
        <EmptyState title={filtered ? "No attempt matches these filters" : "No deliveries yet"}>
          {!filtered && <p>Create a subscription and send a test event, or create a transaction intent: each state change is delivered and logged here.</p>}
        </EmptyState>
      ) : (
        <>
          <Table
            rows={outcome.data.data}
            rowKey={(l) => l.id}
            rowHref={(l) => `${path}/${l.id}`}
            columns={[
              {
                header: "Event, time",
                cell: (l) => (
                  <span className="block space-y-0.5">
                    <code className="block text-xs">{l.topic}</code>
                    <span className="block text-xs">
                      <Time seconds={l.createdAt} />
                    </span>
                  </span>
                ),
              },
              {
                header: "Status",
                cell: (l) => (
                  <span className="block space-y-0.5">
                    <Badge tone={l.status === "success" ? "green" : "red"}>{l.status}</Badge>
                    <span className="block text-xs text-slate-600">
                      HTTP {l.responseStatus ?? "—"} · {l.durationMs} ms
                    </span>
                  </span>
                ),
              },
              { header: "Attempt", cell: (l) => <>#{l.attempt} <span className="text-xs text-slate-500">{l.reason}</span></> },
              {
                header: "Target, object, request",
                cell: (l) => (
                  <div className="w-80 space-y-0.5 whitespace-normal break-all text-xs">
                    <div>{l.trigger ? <span className="font-mono">{l.trigger}</span> : <span className="text-slate-500">{l.url} (no trigger: the project webhook or a test)</span>}</div>
                    <div>
                      <ObjectLink base={scope.base} id={l.relatedObject} />
                    </div>
                    {l.requestID && <div className="font-mono text-slate-500">{l.requestID}</div>}
                  </div>
                ),
              },
              { header: "", cell: (l) => (l.event ? <RedeliverForm action={redeliverAction.bind(null, target, l.id)} /> : null) },
            ]}
          />
          <Pagination total={outcome.data.total} {...page} href={pageHref(path, query)} />
        </>
      )}
    </>
  );
}
