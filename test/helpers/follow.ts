import { getDb } from "@/lib/db/client";
import { followChain, type FollowSummary } from "@/lib/follower/follow";
import { chainOf } from "./chain";

export interface Followed {
  /** Landings settled, holds released, intents landed outside the relayer, by all passes together. */
  settled: number;
  released: string[];
  landedIntents: string[];
  deposits: FollowSummary["deposits"];
  reorgs: NonNullable<FollowSummary["reorg"]>[];
  /** The last block read (null: nothing new). */
  toBlock: number | null;
  head: number;
}

/** Follows the chain until the follower has read it to its head: every pass's work together. */
export async function followed(chainId: number): Promise<Followed> {
  const all: Followed = { settled: 0, released: [], landedIntents: [], deposits: [], reorgs: [], toBlock: null, head: 0 };
  for (let i = 0; i < 20; i++) {
    const pass = await followChain(await getDb(), chainOf(chainId));
    all.settled += pass.settled;
    all.released.push(...(pass.sweep?.released ?? []));
    all.landedIntents.push(...pass.landedIntents);
    all.deposits.push(...pass.deposits);
    if (pass.reorg) all.reorgs.push(pass.reorg);
    all.toBlock = pass.read?.to ?? all.toBlock;
    all.head = pass.head;
    if (pass.caughtUp) return all;
  }
  throw new Error(`the chain follower did not catch up with chain ${chainId}`);
}
