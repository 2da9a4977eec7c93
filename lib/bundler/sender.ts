import { eq } from "drizzle-orm";
import type { Address } from "viem";
import type { Db } from "@/lib/db/client";
import { accounts } from "@/lib/db/schema";
import { inScope } from "@/lib/db/scope";
import type { ProjectContext } from "@/lib/tenant";
import type { EntryPointVersion } from "@/lib/paymasters/op-params";
import { checkAccountEntryPoint } from "@/lib/paymasters/senders";
import { invalidParams } from "./errors";

export interface BundlerSender {
  accountId: string;
  playerId: string | null;
  accountType: string;
}

/**
 * The project's account that sends the op: this bundler relays (and estimates) operations of the project's own
 * accounts on the chain only, for now, so that each is an object of the project (an intent of that account).
 */
export async function projectSender(db: Db, ctx: ProjectContext, chainId: number, sender: Address, version: EntryPointVersion): Promise<BundlerSender> {
  const [account] = await db
    .select({ id: accounts.id, playerId: accounts.playerId, accountType: accounts.accountType })
    .from(accounts)
    .where(inScope(accounts, ctx, eq(accounts.chainId, chainId), eq(accounts.address, sender)))
    .limit(1);
  if (!account) {
    throw invalidParams(
      `userOperation.sender ${sender} is not an account of this project on chain ${chainId}. This bundler serves the project's own accounts only, for now: create it with POST /v1/accounts (externalOwnerAddress = your signer) first.`,
      "userOperation.sender",
    );
  }
  // A v0.6 account's op at the v0.8 EntryPoint (or the reverse) is a -32602 naming the entry point its account uses.
  checkAccountEntryPoint(account.accountType, sender, version);
  return { accountId: account.id, playerId: account.playerId, accountType: account.accountType };
}
