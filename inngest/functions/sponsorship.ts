import { getDb } from "@/lib/db/client";
import { watchAll } from "@/lib/sponsorship/watcher";
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
    let credited = 0;
    let settled = 0;
    let released = 0;
    for (let i = 0; i < PASSES_PER_RUN; i++) {
      const chains = await step.run(`pass-${i}`, async () => watchAll(await getDb(), { deadline: Date.now() + 8_000 }));
      for (const chain of chains) {
        if ("deposits" in chain.deposits) credited += chain.deposits.deposits.filter((d) => d.outcome === "credited").length;
        if ("settled" in chain.landings) {
          settled += Object.keys(chain.landings.settled).length;
          released += chain.landings.released.length;
        }
        if ("settled" in chain.intents) {
          settled += chain.intents.settled;
          released += chain.intents.released;
        }
      }
      if (i < PASSES_PER_RUN - 1) await step.sleep(`wait-${i}`, "10s");
    }
    return { credited, settled, released };
  },
);
