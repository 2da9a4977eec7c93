import { getDb } from "@/lib/db/client";
import { indexAll } from "@/lib/inventory/indexer";
import { inngest } from "../client";

/** Index passes per run: one every 10 seconds of its minute (cron's finest slot), so the index trails the chain by about 10 s. */
export const PASSES_PER_RUN = 6;

/**
 * The NFT transfer index (lib/inventory/indexer.ts): started every minute by cron, each run reads every
 * chain's new Transfer/TransferSingle/TransferBatch logs of registered contracts six times, ten
 * seconds apart. Each pass is a step bounded to 8 s, so a crash repeats at most one pass, and a pass
 * that stops early (a long history to read) is continued by the next one from the stored cursors.
 */
export const indexTokenTransfers = inngest.createFunction(
  { id: "index-token-transfers", retries: 2, triggers: [{ cron: "* * * * *" }] },
  async ({ step }) => {
    let inserted = 0;
    for (let i = 0; i < PASSES_PER_RUN; i++) {
      const chains = await step.run(`pass-${i}`, async () => indexAll(await getDb(), { deadline: Date.now() + 8_000 }));
      inserted += chains.reduce((n, c) => n + ("inserted" in c ? c.inserted : 0), 0);
      if (i < PASSES_PER_RUN - 1) await step.sleep(`wait-${i}`, "10s");
    }
    return { inserted };
  },
);
