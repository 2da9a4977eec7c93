// Settling intents' holds: what the relay does when a bundle lands, in four statements whatever the bundle's size
// (finding each hold and settleHold-ing it takes up to five per intent). The same effect as settleHold for each:
// every live hold settled at its op's actual cost, its balance moved, a settle entry (and a release of the rest).
import { and, eq, inArray, sql } from "drizzle-orm";
import { rowsOf, type Tx } from "@/lib/db/client";
import { sponsorshipEntries, sponsorshipHolds } from "@/lib/db/schema";
import { holdEntry, type HoldRow } from "./ledger";

/** Settles the live holds of these intents at their ops' actual costs (intents without one are skipped). */
export async function settleIntents(tx: Tx, costs: Map<string, bigint>): Promise<number> {
  if (costs.size === 0) return 0;
  const holds = await tx
    .select()
    .from(sponsorshipHolds)
    .where(and(inArray(sponsorshipHolds.intentId, [...costs.keys()]), eq(sponsorshipHolds.status, "held")))
    .orderBy(sponsorshipHolds.id)
    .for("update");
  if (holds.length === 0) return 0;
  const costOf = (h: HoldRow) => costs.get(h.intentId!)!;
  const settled = await tx.execute(sql`
    update ${sponsorshipHolds} set status = 'settled', settled_amount = v.cost::numeric, updated_at = now()
    from (values ${sql.join(
      holds.map((h) => sql`(${h.id}, ${costOf(h).toString()})`),
      sql`, `,
    )}) as v(id, cost)
    where ${sponsorshipHolds.id} = v.id and ${sponsorshipHolds.status} = 'held'
    returning ${sponsorshipHolds.id}`);
  // Locked above: every hold selected is still held (a concurrent settle or release waited for us, then found none).
  const ids = new Set(rowsOf<{ id: string }>(settled).map((r) => r.id));
  const mine = holds.filter((h) => ids.has(h.id));
  if (mine.length === 0) return 0;
  // One balance row per project, mode and chain.
  const balances = new Map<string, { projectId: string; livemode: boolean; chainId: number; held: bigint; settled: bigint }>();
  for (const h of mine) {
    const key = `${h.projectId}:${h.livemode}:${h.chainId}`;
    const b = balances.get(key) ?? { projectId: h.projectId, livemode: h.livemode, chainId: h.chainId, held: 0n, settled: 0n };
    b.held += BigInt(h.amount);
    b.settled += costOf(h);
    balances.set(key, b);
  }
  await tx.execute(sql`
    update sponsorship_balances b set held = b.held - v.held::numeric, settled = b.settled + v.settled::numeric, updated_at = now()
    from (values ${sql.join(
      [...balances.values()].map((b) => sql`(${b.projectId}, ${b.livemode}::boolean, ${b.chainId}::int, ${b.held.toString()}, ${b.settled.toString()})`),
      sql`, `,
    )}) as v(project_id, livemode, chain_id, held, settled)
    where b.project_id = v.project_id and b.livemode = v.livemode and b.chain_id = v.chain_id`);
  await tx.insert(sponsorshipEntries).values(
    mine.flatMap((h) => {
      const amount = BigInt(h.amount);
      const cost = costOf(h);
      return amount > cost ? [holdEntry(h, "settle", cost), holdEntry(h, "release", amount - cost)] : [holdEntry(h, "settle", cost)];
    }),
  );
  return mine.length;
}
