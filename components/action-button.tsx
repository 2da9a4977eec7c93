"use client";

import { useRouter } from "next/navigation";
import { useState } from "react";
import type { FormState } from "@/lib/dashboard/form-state";
import { buttonClass } from "./page";

/**
 * A button that runs a server action and shows what it answered: its error (`role="alert"`) or
 * its `data.message` (`role="status"`). The server component binds the action's arguments
 * (`checkPaymaster.bind(null, projectId, mode, id)`), so the button only calls it.
 */
export function ActionButton({
  action,
  label,
  pendingLabel,
  refresh = false,
  className = "flex flex-col items-start gap-1",
  messageClassName = "text-sm",
}: {
  action: () => Promise<FormState>;
  label: string;
  pendingLabel: string;
  /** Re-render the page's server components afterwards (the action changed what they show). */
  refresh?: boolean;
  /** The wrapper of the button and its message. */
  className?: string;
  /** Extra classes of the message (its size, say). */
  messageClassName?: string;
}) {
  const router = useRouter();
  const [result, setResult] = useState<FormState>({});
  const [pending, setPending] = useState(false);
  return (
    <div className={className}>
      <button
        type="button"
        disabled={pending}
        className={buttonClass("secondary")}
        onClick={async () => {
          setPending(true);
          setResult(await action());
          setPending(false);
          if (refresh) router.refresh();
        }}
      >
        {pending ? pendingLabel : label}
      </button>
      {result.error && (
        <span role="alert" className={`${messageClassName} text-rose-700`}>
          {result.error.message}
        </span>
      )}
      {result.ok && (
        <span role="status" className={`${messageClassName} text-emerald-700`}>
          {String(result.data?.message)}
        </span>
      )}
    </div>
  );
}
