import { supportedChains } from "@/lib/chain/registry";
import { getDb } from "@/lib/db/client";
import { reconcileBlocks, reconcileChain, reconcileInBackground, recordReconciliation } from "@/lib/follower/reconcile";
import { log } from "@/lib/log";
import { inngest } from "../client";

/**
 * Every five minutes, each configured chain's books beside the chain over its last SPONSORSHIP_RECONCILE_BLOCKS
 * confirmed blocks (lib/follower/reconcile.ts): recorded (what /readyz, /metrics and the dashboard's Sponsorship page
 * show) and logged, a warning when the ledger is not the chain. One step per chain; a chain whose node fails is
 * skipped until the next run.
 */
export const reconcileSponsorship = inngest.createFunction(
  { id: "reconcile-sponsorship", retries: 2, triggers: [{ cron: "*/5 * * * *" }] },
  async ({ step }) => {
    const results: { chainId: number; balanced: boolean | null }[] = [];
    if (!reconcileInBackground()) return { chains: results, off: true };
    for (const chain of supportedChains()) {
      results.push(
        await step.run(`chain-${chain.chainId}`, async () => {
          const db = await getDb();
          try {
            const r = await reconcileChain(db, chain, { last: reconcileBlocks() });
            await recordReconciliation(db, r);
            return { chainId: chain.chainId, balanced: r.balanced };
          } catch (err) {
            log.warn({ chainId: chain.chainId, err }, "sponsorship reconciliation failed on this run");
            return { chainId: chain.chainId, balanced: null };
          }
        }),
      );
    }
    return { chains: results };
  },
);
