import type { Queryable } from "@/lib/db/client";
import { listPolicies } from "@/lib/policies/service";
import type { ProjectContext } from "@/lib/tenant";
import { listSessions } from "@/lib/sessions/service";
import { sessionStates, type SessionStatus } from "@/lib/sessions/state";

/** A session as the dashboard's table shows it. */
export interface SessionItem {
  id: string;
  address: string;
  chainId: number;
  playerId: string;
  accountId: string;
  validAfter: number;
  validUntil: number;
  /** Uses left by the chain's count: null without a limit; the limit itself until the chain was asked. */
  usesLeft: number | null;
  limit: number | null;
  whitelist: string[];
  /** Wei one op may make the account pay without a paymaster ("0": sponsored ops only); null: registered before the cap. */
  maxFeePerOp: string | null;
  status: SessionStatus;
  registrationIntentId: string | null;
  /** Revoking it means something (a chain operation, or cancelling an unsigned registration). */
  revocable: boolean;
}

export const SESSIONS_PAGE = 10;

/** One page of a player's (or one account's) sessions, newest first, with their state on chain. */
export async function sessionItems(db: Queryable, ctx: ProjectContext, filter: { player: string; account?: string; skip: number }): Promise<{ items: SessionItem[]; total: number }> {
  const { rows, total } = await listSessions(db, ctx, { player: filter.player, account: filter.account, limit: SESSIONS_PAGE, skip: filter.skip });
  // A chain whose node is down leaves its sessions `unknown` rather than the page unanswered.
  const states = await sessionStates(db, rows, { tolerant: true });
  const items = rows.map((row): SessionItem => {
    const state = states.get(row.id)!;
    return {
      id: row.id,
      address: row.address,
      chainId: row.chainId,
      playerId: row.playerId,
      accountId: row.accountId,
      validAfter: row.validAfter,
      validUntil: row.validUntil,
      limit: row.limit,
      usesLeft: row.limit === null ? null : Math.max(0, row.limit - (state.used ?? 0)),
      whitelist: row.whitelist,
      maxFeePerOp: row.maxFeePerOp,
      status: state.status,
      registrationIntentId: state.registration?.id ?? row.registrationIntentId,
      revocable: state.live && state.status !== "registering" && state.status !== "revoking" && state.status !== "unknown",
    };
  });
  return { items, total };
}

/** Enabled policies of the chains shown, to pick who pays a revocation (none: the account pays). */
export async function revocationPolicies(db: Queryable, ctx: ProjectContext, chainIds: number[]) {
  const lists = await Promise.all([...new Set(chainIds)].map((chainId) => listPolicies(db, ctx, { chainId, enabled: true, limit: 100 })));
  return lists.flatMap((l) => l.rows).map((p) => ({ id: p.id, name: p.name, chainId: p.chainId }));
}
