import { getDb } from "@/lib/db/client";
import { watchAll, type ChainWatch } from "@/lib/sponsorship/watcher";
import { inngest } from "../client";

/** Passes per run: one every 10 seconds of its minute (cron's finest slot), so the ledger trails the confirmed chain by about 10 s. */
export const PASSES_PER_RUN = 6;

/**
 * The sponsorship ledger's chain watcher (lib/sponsorship/watcher.ts): started every minute by cron, each run reads
 * every configured chain six times, ten seconds apart: developers' confirmed deposits to our paymaster (credited once),
 * the landings of operations our paymaster signed over ERC-7677 (holds settled at actualGasCost) and the end of their
 * sponsorship windows (holds released), and intents' holds a crash left held. Each pass is a step bounded to 8 s; the
 * cursors are stored, so a pass that stops early (a long history to read) is continued by the next one, and a crash
 * repeats at most one pass, whose work is idempotent.
 */
export const watchSponsorship = inngest.createFunction(
  { id: "watch-sponsorship", retries: 2, triggers: [{ cron: "* * * * *" }] },
  async ({ step }) => {
    const totals = { credited: 0, settled: 0, released: 0, errors: 0 };
    for (let i = 0; i < PASSES_PER_RUN; i++) {
      // Counts only: a step's result is stored with the run.
      const pass = await step.run(`pass-${i}`, async () => (await watchAll(await getDb(), { deadline: Date.now() + 8_000 })).map(counts));
      for (const chain of pass) for (const k of Object.keys(totals) as (keyof typeof totals)[]) totals[k] += chain[k];
      if (i < PASSES_PER_RUN - 1) await step.sleep(`wait-${i}`, "10s");
    }
    return totals;
  },
);

/** What one chain's pass did, counted. */
function counts(chain: ChainWatch) {
  const failed = (part: object): part is { error: string } => "error" in part;
  return {
    chainId: chain.chainId,
    credited: failed(chain.deposits) ? 0 : chain.deposits.deposits.filter((d) => d.outcome === "credited").length,
    settled: (failed(chain.landings) ? 0 : Object.keys(chain.landings.settled).length) + (failed(chain.intents) ? 0 : chain.intents.settled),
    released: (failed(chain.landings) ? 0 : chain.landings.released.length) + (failed(chain.intents) ? 0 : chain.intents.released),
    errors: [chain.deposits, chain.landings, chain.intents].filter(failed).length,
  };
}
