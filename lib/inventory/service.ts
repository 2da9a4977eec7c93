import { and, asc, count, desc, eq, inArray, or, sql } from "drizzle-orm";
import { getAddress, type Abi, type Address } from "viem";
import { onChain, publicClient } from "@/lib/chain/clients";
import { readChain, type Read } from "@/lib/chain/multicall";
import { chainFor, type ChainConfig } from "@/lib/chain/registry";
import type { Db, Queryable } from "@/lib/db/client";
import { accounts, contracts, tokenTransfers } from "@/lib/db/schema";
import { inScope } from "@/lib/db/scope";
import { getAccount } from "@/lib/accounts/service";
import { badRequest } from "@/lib/errors";
import { getPlayer } from "@/lib/players/service";
import type { ProjectContext } from "@/lib/tenant";
import { indexChain, indexerSettings } from "./indexer";
import type { InventoryItem, InventoryListInput } from "./schema";
import { erc20Reads, erc20TransferEvent, tokenKind } from "./tokens";
import { envNumber } from "@/lib/config";

/** Whose inventory, on which chain: a player without an account there holds nothing there (address null). */
export interface Holder {
  chain: ChainConfig;
  address: Address | null;
}

const settings = () => ({
  ...indexerSettings(),
  /** How long an nft request lets the index catch up with the chain before answering (so a token minted a moment ago shows). */
  catchUpMs: envNumber("INVENTORY_CATCH_UP_MS", 5_000, { above: 0 }),
  /** How far back (blocks, configured chains) an ERC-20's last transfer is looked for; dev chains: their whole history. */
  erc20Lookback: envNumber("INVENTORY_ERC20_LOOKBACK_BLOCKS", 10_000, { above: 0 }),
});

/**
 * A player's holdings on a chain are its account's there. Without an account the player holds
 * nothing on that chain (an empty list, a zero balance) rather than a 404: the player exists and the
 * chain is valid, and the account's address is only fixed once it is created.
 */
export async function playerHolder(db: Queryable, ctx: ProjectContext, playerId: string, chainId: number): Promise<Holder> {
  await getPlayer(db, ctx, playerId);
  const chain = chainFor(ctx, chainId);
  const [account] = await db
    .select({ address: accounts.address })
    .from(accounts)
    .where(inScope(accounts, ctx, eq(accounts.playerId, playerId), eq(accounts.chainId, chainId)));
  return { chain, address: (account?.address as Address | undefined) ?? null };
}

export async function accountHolder(db: Queryable, ctx: ProjectContext, accountId: string): Promise<Holder> {
  const account = await getAccount(db, ctx, accountId);
  return { chain: chainFor(ctx, account.chainId), address: account.address as Address };
}

type ContractRow = typeof contracts.$inferSelect;

/** The project's registered, not deleted contracts on the chain; or exactly those named by the filter, each checked (400 naming it). */
async function contractsOn(db: Queryable, ctx: ProjectContext, chainId: number, input: InventoryListInput): Promise<ContractRow[]> {
  if (!input.contracts?.length) return db.select().from(contracts).where(inScope(contracts, ctx, eq(contracts.chainId, chainId), eq(contracts.deleted, false)));
  const ids = [...new Set(input.contracts)];
  const rows = await db.select().from(contracts).where(inScope(contracts, ctx, inArray(contracts.id, ids)));
  const byId = new Map(rows.map((r) => [r.id, r]));
  for (const [i, id] of input.contracts.entries()) {
    const row = byId.get(id);
    const problem = !row ? "No such contract" : row.deleted ? "The contract is deleted" : row.chainId !== chainId ? `The contract is on chain ${row.chainId}, not ${chainId}` : null;
    if (problem) throw badRequest(`Invalid parameter ${input.param}[${i}]: ${problem} ('${id}').`, { [`${input.param}[${i}]`]: { value: id, message: problem } });
  }
  return rows;
}

const distinctAddresses = (rows: ContractRow[]) => [...new Set(rows.map((r) => r.address.toLowerCase()))] as Address[];

/** Most recently transferred first (or last with `asc`), ties by contract then token; unknown times count as oldest. */
function sortAndPage(items: InventoryItem[], input: InventoryListInput) {
  const sign = input.order === "asc" ? 1 : -1;
  const sorted = [...items].sort(
    (a, b) => sign * ((a.lastTransferredAt ?? -1) - (b.lastTransferredAt ?? -1)) || (a.address ?? "").localeCompare(b.address ?? "") || String(a.tokenId ?? "").localeCompare(String(b.tokenId ?? "")),
  );
  const skip = input.skip ?? 0;
  return { items: sorted.slice(skip, skip + (input.limit ?? 10)), total: sorted.length };
}

/** The native coin's balance: one eth_getBalance. No log records native transfers, so lastTransferredAt is null. */
export async function nativeInventory(holder: Holder): Promise<InventoryItem> {
  const amount = holder.address ? await onChain(holder.chain, () => publicClient(holder.chain).getBalance({ address: holder.address! })) : 0n;
  return { assetType: "ETH", amount: amount.toString(), lastTransferredAt: null };
}

/**
 * ERC-20 balances of the project's registered tokens on the chain, all read in one multicall at one
 * block (with decimals() for contracts whose ABI does not say they are ERC-20, so an NFT is never
 * counted as one); zero balances are left out. lastTransferredAt: the block time of the holder's
 * latest Transfer in or out of each token (two eth_getLogs for all tokens at once).
 */
export async function cryptocurrencyInventory(db: Queryable, ctx: ProjectContext, holder: Holder, input: InventoryListInput) {
  const rows = await contractsOn(db, ctx, holder.chain.chainId, input);
  if (!holder.address) return { items: [], total: 0 };
  const candidates = new Map<Address, boolean>(); // address → whether its ABI declares ERC-20
  for (const row of rows) {
    const kind = tokenKind(row.abi);
    if (kind === "nft") continue;
    const address = row.address.toLowerCase() as Address;
    candidates.set(address, (candidates.get(address) ?? false) || kind === "erc20");
  }
  if (candidates.size === 0) return { items: [], total: 0 };
  const tokens = [...candidates];
  const reads: Read[] = tokens.flatMap(([address, declared]) => [
    { kind: "call" as const, address, abi: erc20Reads as Abi, functionName: "balanceOf", args: [holder.address] },
    ...(declared ? [] : [{ kind: "call" as const, address, abi: erc20Reads as Abi, functionName: "decimals", args: [] }]),
  ]);
  const { block, readings } = await onChain(holder.chain, () => readChain(holder.chain, reads));
  const held: { address: Address; amount: bigint }[] = [];
  let r = 0;
  for (const [address, declared] of tokens) {
    const balance = readings[r++]!;
    // Undeclared ones were also asked decimals(): they count only if it answered.
    const decimals = declared ? null : readings[r++]!;
    const erc20 = declared || !("error" in decimals!);
    if (erc20 && "value" in balance && balance.value > 0n) held.push({ address, amount: balance.value });
  }
  const times = await onChain(holder.chain, () => lastErc20Transfers(holder.chain, held.map((h) => h.address), holder.address!, block));
  const items: InventoryItem[] = held.map((h) => ({ assetType: "ERC20", address: getAddress(h.address), amount: h.amount.toString(), lastTransferredAt: times.get(h.address) ?? null }));
  return sortAndPage(items, input);
}

/** Per token, the block time of the holder's latest Transfer in or out, searched backwards from `atBlock` in bounded ranges. */
async function lastErc20Transfers(chain: ChainConfig, tokens: Address[], holder: Address, atBlock: bigint): Promise<Map<Address, number>> {
  const found = new Map<Address, { block: bigint; time: bigint | null }>();
  if (tokens.length === 0) return new Map();
  const { logRange, erc20Lookback } = settings();
  const client = publicClient(chain);
  const lowest = chain.dev ? 0n : atBlock - BigInt(Math.min(erc20Lookback, Number(atBlock)));
  const step = chain.dev ? atBlock + 1n : BigInt(logRange);
  for (let to = atBlock; to >= lowest && found.size < tokens.length; to -= step) {
    const fromBlock = to - step + 1n > lowest ? to - step + 1n : lowest;
    const address = tokens.filter((t) => !found.has(t));
    const [outs, ins] = await Promise.all([
      client.getLogs({ address, event: erc20TransferEvent, args: { from: holder }, fromBlock, toBlock: to, strict: false }),
      client.getLogs({ address, event: erc20TransferEvent, args: { to: holder }, fromBlock, toBlock: to, strict: false }),
    ]);
    for (const log of [...outs, ...ins]) {
      const token = log.address.toLowerCase() as Address;
      const prior = found.get(token);
      if (!prior || log.blockNumber! > prior.block) found.set(token, { block: log.blockNumber!, time: (log as { blockTimestamp?: bigint | null }).blockTimestamp ?? null });
    }
    if (fromBlock === lowest) break;
  }
  const times = new Map<Address, number>();
  await Promise.all(
    [...found].map(async ([token, { block, time }]) => times.set(token, Number(time ?? (await client.getBlock({ blockNumber: block })).timestamp))),
  );
  return times;
}

const asTokenId = (id: string) => (BigInt(id) <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(id) : id);

/**
 * ERC-721 and ERC-1155 holdings of the project's registered contracts on the chain, summed from the
 * transfer index (what came in minus what went out, per contract and token id). The index is first
 * brought up to the chain's head for these contracts (within INVENTORY_CATCH_UP_MS), so a token
 * minted a moment ago shows; the background function keeps it close behind meanwhile.
 */
export async function nftInventory(db: Db, ctx: ProjectContext, holder: Holder, input: InventoryListInput) {
  const rows = (await contractsOn(db, ctx, holder.chain.chainId, input)).filter((r) => tokenKind(r.abi) !== "erc20");
  if (!holder.address || rows.length === 0) return { items: [], total: 0 };
  const addresses = distinctAddresses(rows);
  await onChain(holder.chain, () => indexChain(db, holder.chain, addresses, { deadline: Date.now() + settings().catchUpMs }));

  return holdings(db, holder.chain.chainId, addresses, holder.address, input);
}

/** What `holder` holds of the indexed `addresses` on the chain: per contract and token id, what came in minus what went out, when positive. */
export async function holdings(db: Queryable, chainId: number, addresses: string[], holder: Address, input: { limit?: number; skip?: number; order?: "asc" | "desc" }) {
  const who = holder.toLowerCase();
  const t = tokenTransfers;
  const balance = sql`sum(case when ${t.toAddress} = ${who} then ${t.amount}::numeric else 0 end) - sum(case when ${t.fromAddress} = ${who} then ${t.amount}::numeric else 0 end)`;
  const last = sql<number>`max(${t.blockTimestamp})`;
  const held = db
    .select({ contract: t.contract, tokenId: t.tokenId, standard: t.standard, amount: sql<string>`(${balance})::text`.as("amount"), last: sql<number>`${last}`.as("last") })
    .from(t)
    .where(and(eq(t.chainId, chainId), inArray(t.contract, addresses.map((a) => a.toLowerCase())), or(eq(t.toAddress, who), eq(t.fromAddress, who))))
    .groupBy(t.contract, t.tokenId, t.standard)
    .having(sql`${balance} > 0`)
    .as("held");
  const dir = input.order === "asc" ? asc : desc;
  const [page, [counted]] = await Promise.all([
    db
      .select()
      .from(held)
      .orderBy(dir(held.last), dir(held.contract), dir(sql`${held.tokenId}::numeric`))
      .limit(input.limit ?? 10)
      .offset(input.skip ?? 0),
    db.select({ total: count() }).from(held),
  ]);
  const items: InventoryItem[] = page.map((h) => ({
    assetType: h.standard,
    address: getAddress(h.contract),
    tokenId: asTokenId(h.tokenId),
    amount: h.amount,
    lastTransferredAt: Number(h.last),
  }));
  return { items, total: counted?.total ?? 0 };
}
