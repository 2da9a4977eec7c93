import type { Address } from "viem";
import type { ChainConfig } from "@/lib/chain/registry";
import { unixSeconds } from "@/lib/http/resource";
import { usdOf, type Balance, type EntryRow } from "./ledger";
import type { BalanceResponse, EntryResponse } from "./schema";

/** usdOf of an amount that may be negative (a balance a correction took below zero). */
const signedUsd = (wei: bigint, price: number) => (wei < 0n ? `-${usdOf(-wei, price)}` : usdOf(wei, price)!);

/** A balance as the API shows it: wei as strings, USD at `price` (the chain's now; null without one). */
export function serializeBalance(chain: ChainConfig, balance: Balance, price: number | null, funding: { entryPoint: Address; paymaster: Address }): BalanceResponse {
  return {
    object: "sponsorshipBalance",
    chainId: chain.chainId,
    livemode: chain.livemode,
    currency: chain.nativeCurrency.symbol,
    available: balance.available.toString(),
    held: balance.held.toString(),
    settled: balance.settled.toString(),
    credited: balance.credited.toString(),
    usd: price === null ? null : { available: signedUsd(balance.available, price), held: signedUsd(balance.held, price), settled: signedUsd(balance.settled, price) },
    entryPoint: funding.entryPoint,
    paymaster: funding.paymaster,
  };
}

const ref = (id: string | null) => (id ? { id } : null);

export function serializeEntry(row: EntryRow): EntryResponse {
  return {
    id: row.id,
    object: "sponsorshipEntry",
    createdAt: unixSeconds(row.createdAt),
    livemode: row.livemode,
    chainId: row.chainId,
    kind: row.kind,
    amount: row.amount,
    usd: row.usd,
    cause: row.cause,
    // Who made a CLI credit (the operator's user and host) stays the operator's: only a deposit's transaction is shown.
    reference: row.cause === "deposit" ? row.reference : null,
    note: row.note,
    hold: ref(row.holdId),
    transactionIntent: ref(row.intentId),
    sponsoredOperation: ref(row.sponsoredOperationId),
    policy: ref(row.policyId),
    player: ref(row.playerId),
    account: ref(row.accountId),
    reverses: ref(row.reverses),
    blockNumber: row.blockNumber,
    blockHash: row.blockHash,
  };
}
