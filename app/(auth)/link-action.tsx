"use client";

import { useRouter } from "next/navigation";
import { useState } from "react";
import { buttonClass, ErrorMessage } from "@/components/page";
import { acceptInviteAction, claimProjectAction } from "@/lib/dashboard/access";

/** The signed-in developer's button on a claim or invitation page: takes the link, then opens the dashboard. */
export function LinkAction({ kind, token, label }: { kind: "claim" | "invite"; token: string; label: string }) {
  const router = useRouter();
  const [error, setError] = useState<string>();
  const [pending, setPending] = useState(false);
  return (
    <div className="space-y-3">
      {error && <ErrorMessage>{error}</ErrorMessage>}
      <button
        type="button"
        disabled={pending}
        className={`${buttonClass()} w-full py-2`}
        onClick={async () => {
          setPending(true);
          const result = kind === "claim" ? await claimProjectAction(token) : await acceptInviteAction(token);
          if (result.ok) {
            const projectId = result.data?.projectId;
            return router.replace(typeof projectId === "string" ? `/projects/${projectId}/test` : "/");
          }
          setError(result.error?.message ?? "Something went wrong. Try again.");
          setPending(false);
        }}
      >
        {pending ? "One moment…" : label}
      </button>
    </div>
  );
}
