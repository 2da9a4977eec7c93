// The operator's commands on the ledger (npm run cli -- sponsorship …): credit or correct a project's balance, and
// see each chain's paymaster deposit against every project's balance. Run by the CLI on the database, or by the
// server that owns the embedded one (lib/admin-commands.ts).
import { eq } from "drizzle-orm";
import { findChain, supportedChains } from "@/lib/chain/registry";
import type { Queryable } from "@/lib/db/client";
import { projects } from "@/lib/db/schema";
import { badRequest } from "@/lib/errors";
import { coverage } from "./coverage";
import { credit } from "./ledger";
import { usdPrice } from "./prices";
import { projectBalances } from "./reads";

export interface CreditCommand {
  project: string;
  mode: "test" | "live";
  chainId: number;
  /** Wei; negative only for a correction. */
  amount: string;
  cause: "funding" | "correction";
  note?: string;
  /** Who credited, from where (the CLI's OS user and host): kept on the entry, shown to the operator only. */
  reference: string;
}

/** The entry made and the balance after it, as JSON (wei as strings). */
export async function creditProject(db: Queryable, cmd: CreditCommand) {
  const amount = BigInt(cmd.amount);
  if (amount === 0n) throw badRequest("The amount must not be zero.");
  if (cmd.cause === "funding" && amount < 0n) throw badRequest("A credit is positive: take an amount back with `sponsorship correct` and a note saying why.");
  if (cmd.cause === "correction" && !cmd.note?.trim()) throw badRequest("A correction needs a --note saying why.");
  const [project] = await db.select({ id: projects.id, name: projects.name }).from(projects).where(eq(projects.id, cmd.project));
  if (!project) throw badRequest(`No such project: ${cmd.project}`);
  const livemode = cmd.mode === "live";
  const chain = findChain(cmd.chainId);
  if (!chain) throw badRequest(`No configured chain ${cmd.chainId}. Chains: ${supportedChains().map((c) => c.chainId).join(", ") || "none"}.`);
  if (chain.livemode !== livemode) {
    throw badRequest(`Chain ${chain.chainId} is a ${chain.livemode ? "live" : "test"} chain: credit the project's ${chain.livemode ? "live" : "test"} mode on it (--mode ${chain.livemode ? "live" : "test"}).`);
  }
  const ctx = { projectId: project.id, livemode };
  // The price before the transaction: it may come from the chain.
  const price = await usdPrice(chain);
  const entry = await credit(db, ctx, { chainId: chain.chainId, amount, cause: cmd.cause, usdPrice: price, reference: cmd.reference, note: cmd.note?.trim() || null });
  const [balance] = await projectBalances(db, ctx, [chain.chainId]);
  return {
    project: { id: project.id, name: project.name },
    mode: cmd.mode,
    chainId: chain.chainId,
    currency: chain.nativeCurrency.symbol,
    entry: entry && { id: entry.id, kind: entry.kind, amount: entry.amount, usd: entry.usd, cause: entry.cause, note: entry.note, reference: entry.reference },
    balance: {
      credited: balance!.credited.toString(),
      held: balance!.held.toString(),
      settled: balance!.settled.toString(),
      available: balance!.available.toString(),
    },
  };
}

export type CreditResult = Awaited<ReturnType<typeof creditProject>>;

/** Per chain (or the one asked), the paymaster's deposit read now against every project's available + held. */
export async function sponsorshipStatus(db: Queryable, chainId?: number) {
  const chain = chainId === undefined ? undefined : findChain(chainId);
  if (chainId !== undefined && !chain) throw badRequest(`No configured chain ${chainId}.`);
  const rows = await coverage(db, { fresh: true, chains: chain ? [chain] : undefined });
  return rows.map((c) => ({
    chainId: c.chainId,
    name: c.name,
    mode: c.livemode ? "live" : "test",
    currency: findChain(c.chainId)?.nativeCurrency.symbol ?? "ETH",
    deposit: c.deposit === null ? null : c.deposit.toString(),
    balances: c.balances.toString(),
    /** What the deposit has beyond the balances (negative: short by that much); null when the deposit is unknown. */
    margin: c.deposit === null ? null : (c.deposit - c.balances).toString(),
    covered: c.covered,
    ...(c.error && { error: c.error }),
  }));
}

export type StatusResult = Awaited<ReturnType<typeof sponsorshipStatus>>;
