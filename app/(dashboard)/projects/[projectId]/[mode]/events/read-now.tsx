"use client";

import { useRouter } from "next/navigation";
import { useState } from "react";
import { buttonClass } from "@/components/page";
import type { FormState } from "@/lib/dashboard/form-state";
import { readMonitorNow } from "@/lib/dashboard/events";

/** Reads one monitor's value now instead of waiting for its next scheduled check. */
export function ReadNow({ projectId, mode, id }: { projectId: string; mode: string; id: string }) {
  const router = useRouter();
  const [result, setResult] = useState<FormState>({});
  const [pending, setPending] = useState(false);
  return (
    <div className="flex flex-col items-start gap-1">
      <button
        type="button"
        disabled={pending}
        className={buttonClass("secondary")}
        onClick={async () => {
          setPending(true);
          setResult(await readMonitorNow(projectId, mode, id));
          setPending(false);
          router.refresh();
        }}
      >
        {pending ? "Reading…" : "Read now"}
      </button>
      {result.error && <span role="alert" className="max-w-xs text-xs text-rose-700">{result.error.message}</span>}
      {result.ok && <span role="status" className="max-w-xs text-xs text-emerald-700">{String(result.data?.message)}</span>}
    </div>
  );
}
