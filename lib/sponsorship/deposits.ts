// Developers' deposits to our paymaster, credited to their projects' sponsorship balances at the confirmation depth
// (the chain follower, lib/follower, reads them), keyed by their transaction, log and block: a reorg that removes one
// reverses its credit with a journal entry, and a deposit that moved to another block is credited there.
import { and, eq, gt, inArray, notExists, sql } from "drizzle-orm";
import { alias } from "drizzle-orm/pg-core";
import { decodeFunctionData, getAbiItem, isAddressEqual, type Address, type Hex, type PublicClient, type Transaction } from "viem";
import { entryPointAbi, verifyingPaymasterAbi } from "@/contracts/artifacts";
import { ourPaymasters } from "@/lib/chain/contracts";
import type { ChainConfig } from "@/lib/chain/registry";
import type { Db, Queryable } from "@/lib/db/client";
import { developerAccounts, sponsorshipBalances, sponsorshipEntries } from "@/lib/db/schema";
import { newId } from "@/lib/ids";
import { log } from "@/lib/log";
import { balanceOfHold, credit, type EntryRow } from "./ledger";
import { usdPrice } from "./prices";

/** The cursor of deposits in chain_cursors: read up to the confirmation depth. */
export const DEPOSITS_CURSOR = "sponsorship-deposits";

export interface DepositOutcome {
  /** `txHash:logIndex`, the credit's reference (unique per chain). */
  reference: string;
  blockNumber: number;
  from: string;
  /** Wei, as a string. */
  amount: string;
  /**
   * credited; already (credited before: a range read again); indirect (not a direct depositTo(paymaster) or
   * paymaster.deposit() call from the depositor's own address: who paid cannot be told); zero (no value);
   * unverified (not a verified, not deleted developer account of a project in the chain's mode); ambiguous (one of
   * several projects').
   */
  outcome: "credited" | "already" | "indirect" | "zero" | "unverified" | "ambiguous";
  /** The one project whose verified developer account sent it (null: none, or several), credited or not. */
  projectId: string | null;
  developerAccountId: string | null;
}

const depositedEvent = getAbiItem({ abi: entryPointAbi, name: "Deposited" });

/**
 * How much `tx` deposited for our paymaster, when it is the depositor's own direct call: EntryPoint.depositTo(paymaster)
 * or the paymaster's deposit() (which forwards its value to depositTo(itself)), its value the amount. Any other way
 * (a contract, a smart account's operation, a batch) leaves who paid unknowable here: null.
 */
function directDeposit(chain: ChainConfig, tx: Transaction): bigint | null {
  if (!tx.to) return null;
  for (const { entryPoint, paymaster } of ourPaymasters(chain)) {
    try {
      if (isAddressEqual(tx.to, entryPoint)) {
        const call = decodeFunctionData({ abi: entryPointAbi, data: tx.input });
        return call.functionName === "depositTo" && isAddressEqual(call.args[0] as Address, paymaster) ? tx.value : null;
      }
      if (isAddressEqual(tx.to, paymaster)) {
        // The v0.6 and v0.8 paymasters' deposit() are the same function.
        const call = decodeFunctionData({ abi: verifyingPaymasterAbi, data: tx.input });
        return call.functionName === "deposit" ? tx.value : null;
      }
    } catch {
      return null; // not a call of either ABI
    }
  }
  return null;
}

/** The verified (external, signed for) and not deleted developer accounts at `addresses` (lower-case) in `livemode`. */
async function verifiedAccounts(db: Db, addresses: string[], livemode: boolean) {
  if (addresses.length === 0) return [];
  return db
    .select({ id: developerAccounts.id, projectId: developerAccounts.projectId, address: sql<string>`lower(${developerAccounts.address})` })
    .from(developerAccounts)
    .where(
      and(
        inArray(sql`lower(${developerAccounts.address})`, addresses),
        eq(developerAccounts.custodial, false),
        eq(developerAccounts.deleted, false),
        eq(developerAccounts.livemode, livemode),
      ),
    );
}

/**
 * The range's Deposited(paymaster) logs credited to their depositors' projects: the chain's mode (a test chain credits
 * test mode, a live chain live mode) and the one project whose verified developer account sent the deposit. Credits
 * are unique per chain, reference and block, so a range read again (a crash, another instance) credits nothing twice.
 * Read from `client`, one node for the whole range.
 */
export async function readDeposits(db: Db, chain: ChainConfig, client: PublicClient, from: bigint, to: bigint): Promise<DepositOutcome[]> {
  // Each of our paymasters' deposits at its own EntryPoint (v0.6, v0.8), in the chain's order.
  const logs = (
    await Promise.all(ourPaymasters(chain).map(({ entryPoint, paymaster }) => client.getLogs({ address: entryPoint, event: depositedEvent, args: { account: paymaster }, fromBlock: from, toBlock: to, strict: true })))
  )
    .flat()
    .sort((a, b) => (a.blockNumber === b.blockNumber ? a.logIndex - b.logIndex : a.blockNumber < b.blockNumber ? -1 : 1));
  if (logs.length === 0) return [];
  const hashes = [...new Set(logs.map((l) => l.transactionHash))];
  const transactions = new Map<Hex, Transaction>();
  for (let i = 0; i < hashes.length; i += 20) {
    await Promise.all(hashes.slice(i, i + 20).map(async (hash) => transactions.set(hash, await client.getTransaction({ hash }))));
  }
  const accounts = await verifiedAccounts(db, [...new Set([...transactions.values()].map((t) => t.from.toLowerCase()))], chain.livemode);
  const price = await usdPrice(chain);
  const outcomes: DepositOutcome[] = [];
  for (const entry of logs) {
    const tx = transactions.get(entry.transactionHash)!;
    const from = tx.from.toLowerCase();
    const amount = directDeposit(chain, tx);
    const mine = accounts.filter((a) => a.address === from);
    const projects = [...new Set(mine.map((a) => a.projectId))];
    const outcome: DepositOutcome = {
      reference: `${entry.transactionHash}:${entry.logIndex}`,
      blockNumber: Number(entry.blockNumber),
      from,
      amount: (amount ?? tx.value).toString(),
      outcome: amount === null ? "indirect" : amount === 0n ? "zero" : projects.length === 0 ? "unverified" : projects.length > 1 ? "ambiguous" : "credited",
      projectId: projects.length === 1 ? projects[0]! : null,
      developerAccountId: projects.length === 1 ? mine[0]!.id : null,
    };
    if (outcome.outcome === "credited") {
      const entryRow = await credit(
        db,
        { projectId: outcome.projectId!, livemode: chain.livemode },
        {
          chainId: chain.chainId,
          amount: amount!,
          cause: "deposit",
          usdPrice: price,
          reference: outcome.reference,
          note: `EntryPoint deposit to the paymaster from developer account ${outcome.developerAccountId} (${from})`,
          block: { number: Number(entry.blockNumber), hash: entry.blockHash.toLowerCase() },
        },
      );
      if (!entryRow) outcome.outcome = "already";
      else log.info({ chainId: chain.chainId, projectId: outcome.projectId, reference: outcome.reference, amount: outcome.amount }, "sponsorship deposit credited");
    } else {
      const why = {
        indirect: "not a direct depositTo(paymaster) or paymaster.deposit() call from the depositor's own address",
        zero: "no value",
        unverified: `${from} is not a verified developer account of any ${chain.livemode ? "live" : "test"}-mode project`,
        ambiguous: `${from} is a verified developer account of several ${chain.livemode ? "live" : "test"}-mode projects (${projects.join(", ")}): none is credited`,
      }[outcome.outcome as "indirect" | "zero" | "unverified" | "ambiguous"];
      const level = outcome.outcome === "ambiguous" ? "warn" : "info";
      log[level]({ chainId: chain.chainId, reference: outcome.reference, from, amount: outcome.amount, reason: outcome.outcome }, `paymaster deposit not credited: ${why}`);
    }
    outcomes.push(outcome);
  }
  return outcomes;
}

const reversal = alias(sponsorshipEntries, "reversal");

/** Deposit credits in blocks after `after` not yet reversed: what a reorg down to `after` must check. */
export const depositCreditsAfter = (q: Queryable, chainId: number, after: number): Promise<EntryRow[]> =>
  q
    .select()
    .from(sponsorshipEntries)
    .where(
      and(
        eq(sponsorshipEntries.chainId, chainId),
        gt(sponsorshipEntries.blockNumber, after),
        eq(sponsorshipEntries.cause, "deposit"),
        eq(sponsorshipEntries.kind, "credit"),
        notExists(q.select({ one: sql`1` }).from(reversal).where(eq(reversal.reverses, sponsorshipEntries.id))),
      ),
    );

/**
 * Deposit credits whose block left the chain: each reversed once (a reversal entry naming it; `credited` down by its
 * amount), in one transaction. A deposit the new chain holds again is credited again when its block is read.
 */
export async function reverseDeposits(db: Db, credits: EntryRow[]): Promise<number> {
  if (credits.length === 0) return 0;
  return db.transaction(async (tx) => {
    let reversed = 0;
    for (const c of credits) {
      const [entry] = await tx
        .insert(sponsorshipEntries)
        .values({
          id: newId("sponsorshipEntry"),
          projectId: c.projectId,
          livemode: c.livemode,
          chainId: c.chainId,
          kind: "reversal",
          amount: c.amount,
          usd: c.usd,
          cause: "deposit",
          reference: c.reference,
          note: `block ${c.blockNumber} (${c.blockHash}) left the chain`,
          blockNumber: c.blockNumber,
          blockHash: c.blockHash,
          reverses: c.id,
        })
        .onConflictDoNothing()
        .returning({ id: sponsorshipEntries.id });
      if (!entry) continue;
      await tx
        .update(sponsorshipBalances)
        .set({ credited: sql`${sponsorshipBalances.credited} - ${c.amount}::numeric`, updatedAt: sql`now()` })
        .where(balanceOfHold(c));
      reversed++;
      log.warn({ chainId: c.chainId, projectId: c.projectId, reference: c.reference, amount: c.amount, blockNumber: c.blockNumber }, "sponsorship deposit reversed: its block left the chain");
    }
    return reversed;
  });
}
