import { Badge } from "@/components/badge";
import { CodeBlock } from "@/components/code";
import { EmptyState, PageHeader } from "@/components/page";
import { Pagination, pageHref, Table } from "@/components/table";
import { Time } from "@/components/time";
import { scopeOf, type ScopeParams } from "@/lib/dashboard/context";
import { apiBase, exampleKey } from "@/lib/dashboard/examples";
import { pageParams } from "@/lib/dashboard/paging";
import { getDb } from "@/lib/db/client";
import { listRequestLogs } from "@/lib/http/request-log";
import { unixSeconds } from "@/lib/http/resource";

export const metadata = { title: "Request log" };

const tone = (status: number) => (status >= 500 ? "red" : status >= 400 ? "amber" : "green");

export default async function LogsPage({ params, searchParams }: { params: ScopeParams; searchParams: Promise<Record<string, string | undefined>> }) {
  const scope = await scopeOf(params);
  const query = await searchParams;
  const page = pageParams(query);
  const failed = query.failed === "true";
  const { rows, total } = await listRequestLogs(await getDb(), scope.ctx, { ...page, failed });
  return (
    <>
      <PageHeader title="Request log" description={`API requests made with this project's ${scope.mode} keys: method, path, status and latency (never keys or bodies).`} />
      <p className="mb-3 flex gap-3 text-sm">
        <a className={failed ? "text-indigo-700 hover:underline" : "font-medium"} href={`${scope.base}/logs`}>All</a>
        <a className={failed ? "font-medium" : "text-indigo-700 hover:underline"} href={`${scope.base}/logs?failed=true`}>Failed only</a>
      </p>
      {total === 0 ? (
        <EmptyState title={failed ? "No failed requests" : "No requests yet"}>
          {!failed && <CodeBlock code={`curl ${await apiBase()}/v1/players -u ${await exampleKey(scope.ctx)}:`} />}
        </EmptyState>
      ) : (
        <>
          <Table
            rows={rows}
            rowKey={(r) => r.id}
            columns={[
              { header: "Status", cell: (r) => <Badge tone={tone(r.status)}>{r.status}</Badge> },
              { header: "Method", cell: (r) => <span className="font-mono text-xs">{r.method}</span> },
              { header: "Path", cell: (r) => <span className="font-mono text-xs">{r.path}</span>, className: "max-w-md truncate" },
              { header: "Latency", cell: (r) => `${r.durationMs} ms` },
              { header: "Request id", cell: (r) => <span className="font-mono text-xs">{r.id}</span> },
              { header: "Time", cell: (r) => <Time seconds={unixSeconds(r.createdAt)} /> },
            ]}
          />
          <Pagination total={total} {...page} href={pageHref(`${scope.base}/logs`, query)} />
        </>
      )}
    </>
  );
}
