"use client";

import { useState } from "react";
import { buttonClass } from "@/components/page";
import type { FormState } from "@/lib/dashboard/form-state";
import { checkPaymaster } from "@/lib/dashboard/paymaster-check";

/** Asks the paymaster's service which EntryPoints it serves (pm_supportedEntryPoints), through the outbound rule. */
export function CheckPaymaster({ projectId, mode, id }: { projectId: string; mode: string; id: string }) {
  const [result, setResult] = useState<FormState>({});
  const [pending, setPending] = useState(false);
  return (
    <div className="flex w-48 flex-col items-start gap-1 whitespace-normal">
      <button
        type="button"
        disabled={pending}
        className={buttonClass("secondary")}
        onClick={async () => {
          setPending(true);
          setResult(await checkPaymaster(projectId, mode, id));
          setPending(false);
        }}
      >
        {pending ? "Checking…" : "Check"}
      </button>
      {result.error && <span role="alert" className="text-sm text-rose-700">{result.error.message}</span>}
      {result.ok && <span role="status" className="text-sm text-emerald-700">{String(result.data?.message)}</span>}
    </div>
  );
}
