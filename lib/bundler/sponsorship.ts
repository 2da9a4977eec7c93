// The sponsorship an op sent to the bundler claims: a signature our paymaster issued (pm_getPaymasterData) for exactly that op.
import { and, eq, ne } from "drizzle-orm";
import type { Hex } from "viem";
import type { ChainConfig } from "@/lib/chain/registry";
import type { Db } from "@/lib/db/client";
import { paymasterSignatures, sponsoredOperations } from "@/lib/db/schema";
import { inScope } from "@/lib/db/scope";
import type { ProjectContext } from "@/lib/tenant";
import { BundlerCode, RpcError } from "./errors";

/**
 * The policy of our paymaster's sponsorship (pm_getPaymasterData) of exactly this op in this project, or a -32501:
 * any of its signatures for that sender and nonce that may still land, the latest or an earlier one.
 */
export async function sponsorshipOnRecord(db: Db, ctx: ProjectContext, chain: ChainConfig, hash: Hex, field: string): Promise<string | null> {
  const [record] = await db
    .select({ policyId: sponsoredOperations.policyId })
    .from(paymasterSignatures)
    .innerJoin(sponsoredOperations, eq(sponsoredOperations.id, paymasterSignatures.sponsoredOperationId))
    .where(
      and(
        inScope(paymasterSignatures, ctx, eq(paymasterSignatures.chainId, chain.chainId)),
        eq(paymasterSignatures.userOperationHash, hash.toLowerCase()),
        ne(paymasterSignatures.status, "dead"),
      ),
    )
    .limit(1);
  if (!record) {
    throw new RpcError(
      BundlerCode.paymaster,
      `This service's paymaster has no sponsorship on record in this project for operation ${hash} that may still land: ask pm_getPaymasterData for the operation exactly as it is sent.`,
      { field },
    );
  }
  return record.policyId;
}
