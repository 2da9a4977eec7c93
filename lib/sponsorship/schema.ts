import { z } from "zod";
import { chainIdField, listInput } from "@/lib/http/fields";
import { idRef } from "@/lib/http/resource";
import { ID_PREFIXES, type IdKind } from "@/lib/ids";

export const ENTRY_KINDS = ["credit", "debit", "hold", "settle", "release", "reversal"] as const;
export const ENTRY_CAUSES = ["intent", "session", "swap", "withdrawal", "account_action", "erc7677", "funding", "deposit", "local_grant", "correction"] as const;

/** An id filter: the resource's prefix, so a mistyped filter is a 400 rather than an empty page. */
const idFilter = (kind: IdKind, what: string) => {
  const prefix = `${ID_PREFIXES[kind]}_`;
  return z
    .string()
    .max(100)
    .refine((v) => v.startsWith(prefix) && v.length > prefix.length, `Expected ${what} id (${prefix}…).`);
};

export const listBalancesInput = z.strictObject({
  /** Only this chain (of the key's mode). */
  chainId: chainIdField().optional(),
});

export const listEntriesInput = z.strictObject({
  ...listInput,
  chainId: chainIdField().optional(),
  kind: z.enum(ENTRY_KINDS, { error: `Expected one of: ${ENTRY_KINDS.join(", ")}.` }).optional(),
  cause: z.enum(ENTRY_CAUSES, { error: `Expected one of: ${ENTRY_CAUSES.join(", ")}.` }).optional(),
  policy: idFilter("policy", "a policy").optional(),
  player: idFilter("player", "a player").optional(),
  /** A player's account (acc_) or a developer account (dac_). */
  account: z
    .string()
    .max(100)
    .refine((v) => /^(acc|dac)_./.test(v), "Expected an account id (acc_…) or a developer account id (dac_…).")
    .optional(),
  intent: idFilter("transactionIntent", "a transaction intent").optional(),
});

const wei = z.string().describe("Wei of the chain's native coin, a decimal integer string.");
const dollars = z.string().describe("US dollars, a decimal string (6 places).");

export const balanceResponse = z.object({
  object: z.literal("sponsorshipBalance"),
  chainId: z.number().int(),
  livemode: z.boolean(),
  /** The native coin's symbol (ETH on the local chains). */
  currency: z.string(),
  /** What operations may still hold: credited - held - settled. */
  available: wei,
  /** The most the operations in flight may still cost. */
  held: wei,
  /** What landed operations cost. */
  settled: wei,
  /** Every credit (funding, deposits, the local chains' test credit) less corrections. */
  credited: wei,
  /** The same amounts in USD at the chain's price now; null when the chain has no price. */
  usd: z.object({ available: dollars, held: dollars, settled: dollars }).nullable(),
  /**
   * Where funding goes: a verified developer account of the project calls `depositTo(paymaster)` on this EntryPoint
   * with the amount as value, and is credited once the deposit has its confirmations.
   */
  entryPoint: z.string(),
  paymaster: z.string(),
});

export const balancesResponse = z.object({
  object: z.literal("list"),
  url: z.string(),
  start: z.number().int(),
  end: z.number().int(),
  total: z.number().int(),
  data: z.array(balanceResponse),
});

export const entryResponse = z.object({
  id: z.string(),
  object: z.literal("sponsorshipEntry"),
  createdAt: z.number().int(),
  livemode: z.boolean(),
  chainId: z.number().int(),
  /**
   * credit and debit move `credited`; hold, settle and release move `held` and `settled`; reversal undoes the credit
   * or settle entry it names (`reverses`: its deposit or landing left the chain in a reorg).
   */
  kind: z.enum(ENTRY_KINDS),
  /** Always positive: the kind says which way it moved the balance. */
  amount: wei,
  /** Its USD value when it was made (null: the chain had no price). */
  usd: dollars.nullable(),
  cause: z.enum(ENTRY_CAUSES),
  /** An on-chain deposit's `transactionHash:logIndex`; null for every other cause. */
  reference: z.string().nullable(),
  /** The operator's note of a credit or correction. */
  note: z.string().nullable(),
  hold: idRef.nullable(),
  transactionIntent: idRef.nullable(),
  sponsoredOperation: idRef.nullable(),
  policy: idRef.nullable(),
  player: idRef.nullable(),
  account: idRef.nullable(),
  /** A reversal's entry. */
  reverses: idRef.nullable(),
  /** The block of a deposit's credit or a landing's settlement (or of what a reversal undoes); null for other entries. */
  blockNumber: z.number().int().nullable(),
  blockHash: z.string().nullable(),
});

export type BalanceResponse = z.infer<typeof balanceResponse>;
export type EntryResponse = z.infer<typeof entryResponse>;
export type ListBalancesInput = z.output<typeof listBalancesInput>;
export type ListEntriesInput = z.output<typeof listEntriesInput>;
