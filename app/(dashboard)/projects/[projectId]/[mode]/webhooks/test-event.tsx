"use client";

import { useRouter } from "next/navigation";
import { useState } from "react";
import { buttonClass } from "@/components/page";
import type { FormState } from "@/lib/dashboard/form-state";
import { sendTestEventAction } from "@/lib/dashboard/webhooks";

export function SendTestEvent({ projectId, mode }: { projectId: string; mode: string }) {
  const router = useRouter();
  const [result, setResult] = useState<FormState>({});
  const [pending, setPending] = useState(false);
  return (
    <div className="flex flex-wrap items-center gap-3">
      <button
        type="button"
        disabled={pending}
        className={buttonClass("secondary")}
        onClick={async () => {
          setPending(true);
          setResult(await sendTestEventAction(projectId, mode));
          setPending(false);
          router.refresh();
        }}
      >
        {pending ? "Sending…" : "Send test event"}
      </button>
      {result.error && <span role="alert" className="text-sm text-rose-700">{result.error.message}</span>}
      {result.ok && <span role="status" className="text-sm text-emerald-700">{String(result.data?.message)}</span>}
    </div>
  );
}
