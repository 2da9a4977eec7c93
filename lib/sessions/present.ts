import type { Queryable } from "@/lib/db/client";
import { unixSeconds } from "@/lib/http/resource";
import { presentIntents } from "@/lib/intents/present";
import { embeddedIntents } from "@/lib/intent-records/embedded";
import type { ProjectContext } from "@/lib/tenant";
import type { SessionExpand, SessionResponse } from "./schema";
import type { SessionRow } from "@/lib/session-keys/service";
import { sessionStates } from "./state";

/**
 * Sessions as the API shows them: `isActive` from the chain, the latest 10 intents of each (registration,
 * revocation, and those its key signed), and the `nextAction` of an intent awaiting the owner's signature.
 */
export async function presentSessions(db: Queryable, ctx: ProjectContext, rows: SessionRow[], expand: SessionExpand, origin?: string): Promise<SessionResponse[]> {
  const [states, intentsBy] = await Promise.all([
    sessionStates(db, rows),
    embeddedIntents(db, "sessionId", rows.map((r) => r.id), expand?.includes("transactionIntents") ?? false),
  ]);
  const awaiting = rows.map((r) => states.get(r.id)!.awaiting).filter((i) => i !== null);
  const nextActions = new Map((await presentIntents(db, ctx, awaiting, undefined, origin)).map((i) => [i.id, i.nextAction]));
  return rows.map((row) => {
    const state = states.get(row.id)!;
    const nextAction = state.awaiting ? nextActions.get(state.awaiting.id) : undefined;
    return {
      id: row.id,
      object: "session" as const,
      createdAt: unixSeconds(row.createdAt),
      updatedAt: unixSeconds(row.updatedAt),
      address: row.address,
      chainId: row.chainId,
      isActive: state.isActive,
      validAfter: String(row.validAfter),
      validUntil: String(row.validUntil),
      whitelist: row.whitelist,
      // No limit registered (2^48-1 on chain): the field is left out.
      ...(row.limit !== null ? { limit: row.limit } : {}),
      ...(row.maxFeePerOp !== null ? { maxFeePerOp: row.maxFeePerOp } : {}),
      player: { id: row.playerId },
      account: { id: row.accountId },
      ...(nextAction ? { nextAction } : {}),
      transactionIntents: intentsBy.get(row.id) ?? [],
    };
  });
}

export const presentSession = async (db: Queryable, ctx: ProjectContext, row: SessionRow, expand: SessionExpand, origin?: string) =>
  (await presentSessions(db, ctx, [row], expand, origin))[0]!;
