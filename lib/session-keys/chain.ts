import { sql } from "drizzle-orm";
import type { Address } from "viem";
import { smartAccountAbi } from "@/contracts/artifacts";
import { onChain, publicClient } from "@/lib/chain/clients";
import type { ChainConfig } from "@/lib/chain/registry";
import type { Queryable } from "@/lib/db/client";

/** What an account holds for a key (`getSessionKey`). `active`: registered, not revoked, not retired by an owner change. */
export interface OnChainKey {
  validAfter: number;
  validUntil: number;
  limit: number;
  used: number;
  active: boolean;
  whitelist: readonly Address[];
  /** Wei one op may make the account pay without a paymaster; 0: paymaster-paid ops only. */
  maxFeePerOp: bigint;
}

/** The chain's clock (its latest block), which is what the EntryPoint judges a key's window by; tests move it. */
export async function chainNow(chain: ChainConfig): Promise<number> {
  const block = await onChain(chain, () => publicClient(chain).getBlock({ blockTag: "latest" }));
  return Number(block.timestamp);
}

/** The key's state on a deployed account (an account without code holds no keys). */
export async function readKey(chain: ChainConfig, account: Address, key: Address): Promise<OnChainKey> {
  const [validAfter, validUntil, limit, used, active, whitelist, maxFeePerOp] = await onChain(chain, () =>
    publicClient(chain).readContract({ address: account, abi: smartAccountAbi, functionName: "getSessionKey", args: [key] }),
  );
  return { validAfter, validUntil, limit, used, active, whitelist, maxFeePerOp };
}

/** A chain time (Unix seconds) as messages show it: ISO 8601 UTC without milliseconds. */
export const chainTime = (seconds: number) => new Date(seconds * 1000).toISOString().replace(".000Z", "Z");

/**
 * Serializes, until the transaction ends, what is decided about one key of one account: its registration (no second
 * live session) and the use checks of its signatures (two signatures racing for the last use).
 */
export async function lockSessionKey(tx: Queryable, accountId: string, key: Address) {
  await tx.execute(sql`select pg_advisory_xact_lock(hashtext(${`session-key:${accountId}:${key.toLowerCase()}`}))`);
}
