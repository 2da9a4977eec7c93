import { AsyncLocalStorage } from "node:async_hooks";
import { envRaw } from "@/lib/config";
import { processSingleton } from "@/lib/singleton";

/**
 * A check of the rule that no remote call (chain node, paymaster, webhook) runs inside a database
 * transaction: it would hold a pool connection (and its row locks) for as long as the remote side
 * takes, and on PGlite, which runs one transaction at a time, every other query of the process.
 * With TRANSACTION_GUARD=1 (tests that check the rule set it) every transaction runs in a marked
 * async context and a remote call made within one is recorded, with its stack. Off, nothing is
 * wrapped or recorded.
 */
const inTransaction = new AsyncLocalStorage<true>();
const state = processSingleton("remoteCallsInTransactions", () => ({ calls: [] as string[] }));

export const transactionGuardOn = () => envRaw("TRANSACTION_GUARD") === "1";

/** Marks the transactions `db` runs (its `transaction` method), when the guard is on. */
export function guardTransactions<D extends { transaction: (...args: never[]) => Promise<unknown> }>(db: D): D {
  if (!transactionGuardOn()) return db;
  const begin = db.transaction.bind(db) as unknown as (body: (tx: unknown) => Promise<unknown>, config?: unknown) => Promise<unknown>;
  (db as unknown as { transaction: typeof begin }).transaction = (body, config) => begin((tx) => inTransaction.run(true, () => body(tx)), config);
  return db;
}

/** Called as a remote call starts: recorded if a transaction is open in this async context. */
export function noteRemoteCall(what: string) {
  if (!inTransaction.getStore()) return;
  state.calls.push(`${what} inside a database transaction\n${new Error().stack?.split("\n").slice(2, 14).join("\n")}`);
}

/** The remote calls made inside transactions so far (and forgets them). */
export function takeRemoteCallsInTransactions(): string[] {
  const calls = state.calls;
  state.calls = [];
  return calls;
}
