/**
 * Which intent deploys an undeployed account. Concurrent first intents of an account must not all carry its initCode:
 * once one op deploys it, an op with initCode fails AA10 for ever. So one live intent per account is its deployer
 * (DEPLOYER_INDEX, a partial unique index, settles races across processes; claimDeployment spares this process the
 * race), the others are built without initCode and held by the relay until the account has code.
 */
import { and, eq, inArray } from "drizzle-orm";
import type { Queryable } from "@/lib/db/client";
import { transactionIntents } from "@/lib/db/schema";
import type { IntentRow } from "./service";

/** The unique index that lets one live intent per account carry its initCode. */
export const DEPLOYER_INDEX = "transaction_intents_one_deployer";

/** Accounts (chainId:accountId) whose deploying intent this process is building. */
const claims = new Set<string>();

/**
 * Claims the building of the account's deploying intent in this process: a release function, or null when another
 * request of this process is building it (build this one to run after it, at once, instead of racing for the index).
 */
export function claimDeployment(chainId: number, accountId: string): (() => void) | null {
  const key = `${chainId}:${accountId}`;
  if (claims.has(key)) return null;
  claims.add(key);
  return () => claims.delete(key);
}

/** The live (awaiting signature or pending) intent that deploys the account, if any. */
export async function liveDeployer(db: Queryable, chainId: number, accountId: string): Promise<IntentRow | undefined> {
  const [row] = await db
    .select()
    .from(transactionIntents)
    .where(
      and(
        eq(transactionIntents.chainId, chainId),
        eq(transactionIntents.accountId, accountId),
        eq(transactionIntents.deploysAccount, true),
        inArray(transactionIntents.status, ["awaiting_signature", "pending"]),
      ),
    );
  return row;
}

/** Whether `err` (or its cause) is PostgreSQL's unique violation of `constraint`, from either driver. */
export function violates(err: unknown, constraint: string): boolean {
  type PgError = { code?: unknown; constraint?: unknown; constraint_name?: unknown; message?: unknown; cause?: unknown };
  for (let e = err as PgError | undefined; e; e = e.cause as PgError | undefined) {
    if (e.code === "23505" && [e.constraint, e.constraint_name, e.message].some((v) => typeof v === "string" && v.includes(constraint))) return true;
  }
  return false;
}
