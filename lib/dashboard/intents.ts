"use server";

import { z } from "zod";
import { getDb } from "@/lib/db/client";
import { unixSeconds } from "@/lib/http/resource";
import { INTENT_STATES, isFinal, searchIntents } from "@/lib/intents/search";
import { getIntent, type IntentRow } from "@/lib/intents/service";
import { projectScope } from "./context";
import { PAGE_SIZE } from "./paging";

/** What the intents table shows of an intent, as plain JSON for the polling client. */
export interface IntentListItem {
  id: string;
  status: string;
  confirmed: boolean;
  final: boolean;
  chainId: number;
  playerId: string | null;
  accountId: string;
  policyId: string | null;
  transactionHash: string | null;
  gasCost: string | null;
  createdAt: number;
}

const listItem = (row: IntentRow): IntentListItem => ({
  id: row.id,
  status: row.status,
  confirmed: row.confirmedAt !== null,
  final: isFinal(row),
  chainId: row.chainId,
  playerId: row.playerId,
  accountId: row.accountId,
  policyId: row.policyId,
  transactionHash: row.transactionHash,
  gasCost: row.gasCost,
  createdAt: unixSeconds(row.createdAt),
});

// The page's query string, from the browser: anything unexpected is dropped, not an error.
const optional = <T extends z.ZodType>(schema: T) => schema.optional().catch(undefined);
const intentFilters = z.object({
  state: optional(z.enum(INTENT_STATES)),
  player: optional(z.string().max(100)),
  policy: optional(z.string().max(100)),
  chainId: optional(z.coerce.number().int().positive()),
  q: optional(z.string().max(200)),
  skip: z.coerce.number().int().min(0).max(1_000_000).catch(0),
});
export type IntentFilters = z.infer<typeof intentFilters>;

export async function listIntentItems(projectId: string, mode: string, query: Record<string, unknown>) {
  const scope = await projectScope(projectId, mode);
  const filters = intentFilters.parse(query);
  const { rows, total } = await searchIntents(await getDb(), scope.ctx, { ...filters, q: filters.q || undefined, limit: PAGE_SIZE });
  return { filters, rows: rows.map(listItem), total };
}

/** An intent's current state, for its page to poll until final. */
export async function intentProgress(projectId: string, mode: string, id: string) {
  const scope = await projectScope(projectId, mode);
  return listItem(await getIntent(await getDb(), scope.ctx, String(id)));
}
