import { getDb } from "@/lib/db/client";
import { followAll, type ChainFollow } from "@/lib/follower/follow";
import { inngest } from "../client";

/** Passes per run: one every 10 seconds of its minute (cron's finest slot), so the ledger trails the chain by about 10 s. */
export const PASSES_PER_RUN = 6;

/**
 * The chain follower (lib/follower/follow.ts): started every minute by cron, each run follows every configured chain
 * six times, ten seconds apart: reorgs undone, every operation our paymasters paid attributed (and settled at the
 * confirmation depth), intents landed outside the relayer recorded, developers' deposits credited, holds whose
 * signatures can no longer land released. Each pass is a step bounded to 8 s; the cursors are stored, so a pass that
 * stops early (a long history to read) is continued by the next one, and a crash repeats at most one pass, whose work
 * is idempotent.
 */
export const watchSponsorship = inngest.createFunction(
  { id: "watch-sponsorship", retries: 2, triggers: [{ cron: "* * * * *" }] },
  async ({ step }) => {
    const totals = { observed: 0, settled: 0, credited: 0, released: 0, reorgs: 0, landed: 0, errors: 0 };
    for (let i = 0; i < PASSES_PER_RUN; i++) {
      // Counts only: a step's result is stored with the run.
      const pass = await step.run(`pass-${i}`, async () => (await followAll(await getDb(), { deadline: Date.now() + 8_000 })).map(counts));
      for (const chain of pass) for (const k of Object.keys(totals) as (keyof typeof totals)[]) totals[k] += chain[k];
      if (i < PASSES_PER_RUN - 1) await step.sleep(`wait-${i}`, "10s");
    }
    return totals;
  },
);

/** What one chain's pass did, counted. */
function counts(chain: ChainFollow) {
  if ("error" in chain) return { chainId: chain.chainId, observed: 0, settled: 0, credited: 0, released: 0, reorgs: 0, landed: 0, errors: 1 };
  return {
    chainId: chain.chainId,
    observed: chain.observed,
    settled: chain.settled,
    credited: chain.deposits.filter((d) => d.outcome === "credited").length,
    released: chain.sweep?.released.length ?? 0,
    reorgs: chain.reorg ? 1 : 0,
    landed: chain.landedIntents.length,
    errors: 0,
  };
}
