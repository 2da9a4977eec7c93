import { and, eq, ilike, isNotNull, isNull, or, type SQL } from "drizzle-orm";
import type { Queryable } from "@/lib/db/client";
import { transactionIntents } from "@/lib/db/schema";
import { inScope } from "@/lib/db/scope";
import { listPage } from "@/lib/http/list";
import { likePattern } from "@/lib/players/service";
import type { ProjectContext } from "@/lib/tenant";

/** The states the dashboard shows: "broadcast" is landed but not yet confirmed, "successful" confirmed. */
export const INTENT_STATES = ["awaiting_signature", "pending", "broadcast", "successful", "failed", "cancelled"] as const;
export type IntentState = (typeof INTENT_STATES)[number];

function inState(state: IntentState): SQL | undefined {
  const t = transactionIntents;
  if (state === "broadcast") return or(eq(t.status, "broadcast"), and(eq(t.status, "successful"), isNull(t.confirmedAt)));
  if (state === "successful") return and(eq(t.status, "successful"), isNotNull(t.confirmedAt));
  return eq(t.status, state);
}

/** The dashboard's intent list: by state, player, policy, chain, and an id or hash typed in the search box. */
export async function searchIntents(
  db: Queryable,
  ctx: ProjectContext,
  input: { state?: IntentState; player?: string; policy?: string; chainId?: number; q?: string; limit: number; skip: number },
) {
  const t = transactionIntents;
  const q = input.q?.trim();
  const pattern = q ? likePattern(q) : undefined;
  return listPage(
    db,
    t,
    inScope(
      t,
      ctx,
      input.state ? inState(input.state) : undefined,
      input.player ? eq(t.playerId, input.player) : undefined,
      input.policy ? eq(t.policyId, input.policy) : undefined,
      input.chainId !== undefined ? eq(t.chainId, input.chainId) : undefined,
      pattern ? or(ilike(t.id, pattern), ilike(t.accountId, pattern), ilike(t.transactionHash, pattern), ilike(t.userOperationHash, pattern)) : undefined,
    ),
    input,
  );
}

/** Whether an intent's state can no longer change: the page stops polling it. */
export const isFinal = (row: { status: string; confirmedAt: Date | null }) =>
  row.status === "failed" || row.status === "cancelled" || (row.status === "successful" && row.confirmedAt !== null);
