"use client";

import { useQuery } from "@tanstack/react-query";
import { useRouter } from "next/navigation";
import { useEffect, useRef } from "react";
import { intentProgress, type IntentListItem } from "@/lib/dashboard/intents";
import { Badge, intentState } from "./badge";

/**
 * The intent's status, polled every 1.5 s until it can no longer change; each change re-renders
 * the page around it (transaction, gas, logs) from the server.
 */
export function IntentProgress({ projectId, mode, initial }: { projectId: string; mode: string; initial: IntentListItem }) {
  const router = useRouter();
  const { data } = useQuery({
    queryKey: ["intent", projectId, mode, initial.id],
    queryFn: () => intentProgress(projectId, mode, initial.id),
    initialData: initial,
    refetchInterval: (query) => (query.state.data?.final ? false : 1500),
  });
  const state = intentState(data);
  const seen = useRef(state.label);
  useEffect(() => {
    if (seen.current === state.label) return;
    seen.current = state.label;
    router.refresh();
  }, [state.label, router]);
  return (
    <span data-testid="intent-status" className="inline-flex items-center gap-2">
      <Badge tone={state.tone}>{state.label}</Badge>
      {!data.final && <span className="text-xs text-slate-500">updating live</span>}
    </span>
  );
}
