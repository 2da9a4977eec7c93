// Developers' deposits to our paymaster, credited to their projects' sponsorship balances (lib/sponsorship/watcher.ts).
import { and, eq, inArray, sql } from "drizzle-orm";
import { decodeFunctionData, getAbiItem, isAddressEqual, type Address, type Hex, type Transaction } from "viem";
import { entryPointAbi, verifyingPaymasterAbi } from "@/contracts/artifacts";
import { publicClient } from "@/lib/chain/clients";
import { ourPaymasters } from "@/lib/chain/contracts";
import type { ChainConfig } from "@/lib/chain/registry";
import type { Db } from "@/lib/db/client";
import { developerAccounts } from "@/lib/db/schema";
import { log } from "@/lib/log";
import { credit } from "./ledger";
import { usdPrice } from "./prices";
import { scanChain, type PassOptions, type ScanSummary } from "./watcher-scan";

/** The cursor of the deposits watcher in chain_cursors. */
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

export interface DepositSummary extends ScanSummary {
  deposits: DepositOutcome[];
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
 * are unique per chain and reference, so a range read again (a crash, another instance) credits nothing twice.
 */
async function readDeposits(db: Db, chain: ChainConfig, from: bigint, to: bigint): Promise<DepositOutcome[]> {
  const client = publicClient(chain);
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

/** Reads the chain's new, confirmed deposits to our paymaster from its cursor and credits them (one pass, bounded). */
export async function watchDeposits(db: Db, chain: ChainConfig, options: PassOptions = {}): Promise<DepositSummary> {
  const deposits: DepositOutcome[] = [];
  const scan = await scanChain(db, chain, DEPOSITS_CURSOR, async (from, to) => void deposits.push(...(await readDeposits(db, chain, from, to))), options);
  return { ...scan, deposits };
}
