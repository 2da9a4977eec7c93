"use client";

import { useQuery } from "@tanstack/react-query";
import Link from "next/link";
import type { ReactNode } from "react";
import { formatEther } from "viem";
import { listIntentItems, type IntentFilters, type IntentListItem } from "@/lib/dashboard/intents";
import { PAGE_SIZE } from "@/lib/dashboard/paging";
import { Badge, intentState } from "./badge";
import { Mono } from "./code";
import { Pagination, pageHref, Table } from "./table";
import { Time } from "./time";

interface IntentPage {
  rows: IntentListItem[];
  total: number;
}

/** The intents table, refreshed every 2 s while one of its intents can still change, every 10 s otherwise (for new ones). */
export function IntentsTable({
  projectId,
  mode,
  base,
  filters,
  initial,
  chains,
  empty,
}: {
  projectId: string;
  mode: string;
  base: string;
  filters: IntentFilters;
  initial: IntentPage;
  chains: Record<number, { name: string; symbol: string }>;
  /** Shown while there is no intent (new ones appear on their own). */
  empty: ReactNode;
}) {
  const { data } = useQuery({
    queryKey: ["intents", projectId, mode, filters],
    queryFn: () => listIntentItems(projectId, mode, filters),
    initialData: initial,
    refetchInterval: (query) => (query.state.data?.rows.some((r) => !r.final) ? 2000 : 10_000),
  });
  const query = Object.fromEntries(Object.entries(filters).map(([k, v]) => [k, v === undefined ? undefined : String(v)]));
  if (data.total === 0) return empty;
  return (
    <>
      <Table
        rows={data.rows}
        rowKey={(i) => i.id}
        rowHref={(i) => `${base}/intents/${i.id}`}
        columns={[
          { header: "Intent", cell: (i) => <span className="font-mono text-xs">{i.id}</span> },
          {
            header: "Status",
            cell: (i) => {
              const s = intentState(i);
              return (
                <span data-testid={`status-${i.id}`}>
                  <Badge tone={s.tone}>{s.label}</Badge>
                </span>
              );
            },
          },
          { header: "Player", cell: (i) => (i.playerId ? <Link className="font-mono text-xs text-indigo-700 hover:underline" href={`${base}/players/${i.playerId}`}>{i.playerId}</Link> : <span className="text-xs text-slate-500">developer account</span>) },
          { header: "Policy", cell: (i) => (i.policyId ? <Link className="font-mono text-xs text-indigo-700 hover:underline" href={`${base}/policies/${i.policyId}`}>{i.policyId}</Link> : <span className="text-xs text-slate-500">not sponsored</span>) },
          { header: "Chain", cell: (i) => chains[i.chainId]?.name ?? i.chainId },
          { header: "Transaction", cell: (i) => (i.transactionHash ? <Mono value={i.transactionHash} /> : "—") },
          { header: "Gas fee", cell: (i) => (i.gasCost ? `${formatEther(BigInt(i.gasCost))} ${chains[i.chainId]?.symbol ?? ""}` : "—") },
          { header: "Created", cell: (i) => <Time seconds={i.createdAt} /> },
        ]}
      />
      <Pagination total={data.total} skip={filters.skip} limit={PAGE_SIZE} href={pageHref(`${base}/intents`, query)} />
    </>
  );
}
