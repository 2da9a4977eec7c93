// Reading a project's sponsorship ledger: its balances per chain and the journal's entries, for the API, the dashboard
// and the balance.project monitors.
import { eq, inArray } from "drizzle-orm";
import type { Queryable } from "@/lib/db/client";
import { sponsorshipBalances, sponsorshipEntries } from "@/lib/db/schema";
import { inScope } from "@/lib/db/scope";
import { preparedList, type ListPlaceholders } from "@/lib/http/list";
import type { ProjectContext } from "@/lib/tenant";
import { ensureBalance, type Balance, type BalanceRow } from "./ledger";
import type { ListEntriesInput } from "./schema";

const toBalance = (row: BalanceRow): Balance => {
  const credited = BigInt(row.credited);
  const held = BigInt(row.held);
  const settled = BigInt(row.settled);
  return { chainId: row.chainId, credited, held, settled, available: credited - held - settled };
};

/**
 * The project's balances on `chainIds`, in that order. A chain it has no row for yet gets one first (with the
 * local chains' test-mode credit, as its first sponsored operation would), in one transaction per call: a read of
 * rows already there writes nothing.
 */
export async function projectBalances(db: Queryable, ctx: ProjectContext, chainIds: number[]): Promise<Balance[]> {
  if (chainIds.length === 0) return [];
  const read = () => db.select().from(sponsorshipBalances).where(inScope(sponsorshipBalances, ctx, inArray(sponsorshipBalances.chainId, chainIds)));
  let rows = await read();
  const missing = chainIds.filter((id) => !rows.some((r) => r.chainId === id));
  if (missing.length > 0) {
    await db.transaction(async (tx) => {
      for (const chainId of missing) await ensureBalance(tx, ctx, chainId);
    });
    rows = await read();
  }
  const byChain = new Map(rows.map((r) => [r.chainId, toBalance(r)]));
  return chainIds.map((id) => byChain.get(id)!);
}

type EntryFilters = {
  chainId?: number;
  kind?: string;
  cause?: string;
  policy?: string;
  player?: string;
  account?: string;
  intent?: string;
};

/** The ledger page: newest first, over the (project, mode, createdAt, id) index; a statement per filter shape. */
const entriesPage = preparedList(sponsorshipEntries, (p: ListPlaceholders<EntryFilters>) => {
  const f = p.filters;
  return {
    where: inScope(
      sponsorshipEntries,
      p,
      f.chainId && eq(sponsorshipEntries.chainId, f.chainId),
      f.kind && eq(sponsorshipEntries.kind, f.kind as never),
      f.cause && eq(sponsorshipEntries.cause, f.cause as never),
      f.policy && eq(sponsorshipEntries.policyId, f.policy),
      f.player && eq(sponsorshipEntries.playerId, f.player),
      f.account && eq(sponsorshipEntries.accountId, f.account),
      f.intent && eq(sponsorshipEntries.intentId, f.intent),
    ),
  };
});

export function listEntries(db: Queryable, ctx: ProjectContext, input: ListEntriesInput) {
  const { chainId, kind, cause, policy, player, account, intent } = input;
  return entriesPage(db, ctx, input, { chainId, kind, cause, policy, player, account, intent });
}
