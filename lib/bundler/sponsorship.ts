// The sponsorship an op sent to the bundler claims: our paymaster's record (pm_getPaymasterData) of exactly that op.
import { and, eq } from "drizzle-orm";
import type { Hex } from "viem";
import type { ChainConfig } from "@/lib/chain/registry";
import type { Db } from "@/lib/db/client";
import { sponsoredOperations } from "@/lib/db/schema";
import { inScope } from "@/lib/db/scope";
import type { ProjectContext } from "@/lib/tenant";
import { BundlerCode, RpcError } from "./errors";

/** The policy of our paymaster's sponsorship (pm_getPaymasterData) of exactly this op in this project, or a -32501. */
export async function sponsorshipOnRecord(db: Db, ctx: ProjectContext, chain: ChainConfig, hash: Hex, field: string): Promise<string | null> {
  const [record] = await db
    .select({ policyId: sponsoredOperations.policyId })
    .from(sponsoredOperations)
    .where(inScope(sponsoredOperations, ctx, and(eq(sponsoredOperations.chainId, chain.chainId), eq(sponsoredOperations.userOperationHash, hash))))
    .limit(1);
  if (!record) {
    throw new RpcError(
      BundlerCode.paymaster,
      `This service's paymaster has no sponsorship on record in this project for operation ${hash}: ask pm_getPaymasterData for the operation exactly as it is sent (a later sponsorship for the same sender and nonce replaces an earlier one).`,
      { field },
    );
  }
  return record.policyId;
}
