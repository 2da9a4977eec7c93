// What the sponsorship ledger learns from the chain: developers' deposits to our paymaster (credits), the landings of
// operations our paymaster signed for outside clients over ERC-7677 (settlements) and the end of their sponsorship
// windows (releases), plus a safety net for intents' holds a crash left behind. Run per configured chain by the
// background function watch-sponsorship (inngest/functions/sponsorship.ts), every pass bounded in time and blocks.
import { and, eq, inArray, isNotNull } from "drizzle-orm";
import { message } from "@/lib/chain/multicall";
import { supportedChains, type ChainConfig } from "@/lib/chain/registry";
import type { Db } from "@/lib/db/client";
import { sponsorshipHolds, transactionIntents } from "@/lib/db/schema";
import { log } from "@/lib/log";
import { releaseHold, settleHold } from "./ledger";
import { watchDeposits, type DepositSummary } from "./watcher-deposits";
import { watchLandings, type LandingSummary } from "./watcher-landings";
import type { PassOptions } from "./watcher-scan";

export { watchDeposits, type DepositOutcome, type DepositSummary } from "./watcher-deposits";
export { watchLandings, type LandingSummary } from "./watcher-landings";
export { scanChain, watcherSettings, type PassOptions, type ScanSummary } from "./watcher-scan";

export interface IntentHoldsSummary {
  settled: number;
  released: number;
}

const SAFETY_BATCH = 500;

/**
 * The safety net of intents' holds (the relay settles or releases them as it records the outcome; a crash between the
 * two, or an older process, may leave one held): a hold still held whose intent has an actual cost (landed: successful,
 * or failed with its calls reverted) is settled at it; one whose intent failed without landing or was cancelled is
 * released. Database only, in batches.
 */
export async function settleIntentHolds(db: Db, chain: ChainConfig): Promise<IntentHoldsSummary> {
  const summary: IntentHoldsSummary = { settled: 0, released: 0 };
  for (;;) {
    const rows = await db
      .select({ holdId: sponsorshipHolds.id, intentId: transactionIntents.id, status: transactionIntents.status, gasCost: transactionIntents.gasCost })
      .from(sponsorshipHolds)
      .innerJoin(transactionIntents, eq(transactionIntents.id, sponsorshipHolds.intentId))
      .where(
        and(
          eq(sponsorshipHolds.status, "held"),
          eq(sponsorshipHolds.chainId, chain.chainId),
          isNotNull(sponsorshipHolds.intentId),
          inArray(transactionIntents.status, ["successful", "failed", "cancelled"]),
        ),
      )
      .limit(SAFETY_BATCH);
    if (rows.length === 0) return summary;
    let acted = 0;
    await db.transaction(async (tx) => {
      for (const row of rows) {
        if (row.gasCost !== null) {
          if (await settleHold(tx, row.holdId, BigInt(row.gasCost))) summary.settled++;
        } else if (row.status !== "successful") {
          if (await releaseHold(tx, row.holdId)) summary.released++;
        } else {
          // Successful without a recorded cost: the relay has not written its landing yet; the next pass looks again.
          continue;
        }
        acted++;
      }
    });
    if (acted > 0) log.info({ chainId: chain.chainId, settled: summary.settled, released: summary.released }, "sponsorship watcher: intent holds the relay left held settled or released");
    if (rows.length < SAFETY_BATCH || acted === 0) return summary;
  }
}

export interface ChainWatch {
  chainId: number;
  deposits: DepositSummary | { error: string };
  landings: LandingSummary | { error: string };
  intents: IntentHoldsSummary | { error: string };
}

const attempt = async <T>(chain: ChainConfig, what: string, work: () => Promise<T>): Promise<T | { error: string }> => {
  try {
    return await work();
  } catch (err) {
    log.warn({ chainId: chain.chainId, err }, `sponsorship watcher: ${what} failed on this pass`);
    return { error: message(err) };
  }
};

/** One pass over one chain: deposits, ERC-7677 landings and expiries, intents' holds; each part on its own (a failing one reported, not fatal). */
export async function watchChain(db: Db, chain: ChainConfig, options: PassOptions = {}): Promise<ChainWatch> {
  const deposits = await attempt(chain, "reading deposits", () => watchDeposits(db, chain, options));
  const landings = await attempt(chain, "reading ERC-7677 landings", () => watchLandings(db, chain, options));
  const intents = await attempt(chain, "the intents' safety net", () => settleIntentHolds(db, chain));
  return { chainId: chain.chainId, deposits, landings, intents };
}

/** One pass over every configured chain, side by side (the background function's step). */
export async function watchAll(db: Db, options: PassOptions = {}): Promise<ChainWatch[]> {
  return Promise.all(supportedChains().map((chain) => watchChain(db, chain, options)));
}
