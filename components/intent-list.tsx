import Link from "next/link";
import { unixSeconds } from "@/lib/http/resource";
import { Badge, intentState } from "./badge";
import { Time } from "./time";

export interface IntentSummary {
  id: string;
  status: string;
  confirmedAt: Date | null;
  createdAt: Date;
}

/** A short list of recent intents (on a player, account or policy page), linking to each. */
export function RecentIntents({ intents, base }: { intents: IntentSummary[]; base: string }) {
  if (intents.length === 0) return <p className="text-sm text-slate-500">No transaction intents yet.</p>;
  return (
    <ul className="divide-y divide-slate-100 text-sm">
      {intents.map((i) => {
        const state = intentState({ status: i.status, confirmed: i.confirmedAt !== null });
        return (
          <li key={i.id} className="flex flex-wrap items-center gap-3 py-2">
            <Link href={`${base}/intents/${i.id}`} className="font-mono text-xs text-indigo-700 hover:underline">
              {i.id}
            </Link>
            <Badge tone={state.tone}>{state.label}</Badge>
            <span className="ml-auto text-xs text-slate-500">
              <Time seconds={unixSeconds(i.createdAt)} />
            </span>
          </li>
        );
      })}
    </ul>
  );
}
