// Intents of operations a client built and signed itself (the bundler RPC, lib/bundler): recorded as they are, then
// relayed as any signed intent (relayIntent). Nothing here builds, sponsors or signs.
import { and, eq } from "drizzle-orm";
import type { Hex } from "viem";
import type { ChainConfig } from "@/lib/chain/registry";
import type { Queryable } from "@/lib/db/client";
import { transactionIntents } from "@/lib/db/schema";
import { inScope } from "@/lib/db/scope";
import { conflict } from "@/lib/errors";
import { currentRequestId } from "@/lib/http/request-context";
import { newId } from "@/lib/ids";
import type { ProjectContext } from "@/lib/tenant";
import { DEPLOYER_INDEX, violates } from "./deployer";
import type { IntentRow } from "./service";
import { opDeploys, opMaxCost, storeOp, type VersionedOp } from "@/lib/intent-records/versioned-op";

export interface ClientOperation {
  /** The project's account (acc_) that sends it, and its player. */
  accountId: string;
  playerId: string | null;
  /** The op of either EntryPoint version (a v0.8 op is stored in the v0.8 RPC shape, its EIP-7702 authorization with it). */
  versioned: VersionedOp;
  /** Its userOpHash on the chain. */
  hash: Hex;
  /** The policy whose ERC-7677 sponsorship signed its paymasterAndData (sponsored_operations), if any. */
  policyId: string | null;
  /** Its calls as far as they can be read (execute/executeBatch decoded), else none. */
  interactions: Record<string, unknown>[];
}

/** The project's intent of this userOpHash on the chain, if any. */
export async function intentOfOperation(db: Queryable, ctx: ProjectContext, chainId: number, hash: Hex): Promise<IntentRow | null> {
  const [row] = await db
    .select()
    .from(transactionIntents)
    .where(inScope(transactionIntents, ctx, eq(transactionIntents.chainId, chainId), eq(transactionIntents.userOperationHash, hash.toLowerCase())))
    .limit(1);
  return row ?? null;
}

/**
 * Records a client's complete, signed operation as a pending intent of its account (source "rpc"), or finds the one a
 * first send of it recorded (`created` false): a resend never makes a second intent.
 * Its sponsorship, if any, is the ERC-7677 record's: that record's hold is settled when the op lands (the landings
 * watcher, by userOpHash) and counted by the policy's rate limits, so the intent takes no hold and is not `sponsored`
 * (which would count it a second time); its policyId still names the policy, for reports and filters.
 */
export async function recordClientOperation(db: Queryable, ctx: ProjectContext, chain: ChainConfig, input: ClientOperation): Promise<{ intent: IntentRow; created: boolean }> {
  const { op } = input.versioned;
  let inserted: IntentRow[];
  try {
    inserted = await db
      .insert(transactionIntents)
      .values({
        id: newId("transactionIntent"),
        ...ctx,
        chainId: chain.chainId,
        playerId: input.playerId,
        accountId: input.accountId,
        policyId: input.policyId,
        status: "pending",
        sponsored: false,
        interactions: input.interactions,
        userOperation: storeOp(input.versioned),
        userOperationHash: input.hash.toLowerCase(),
        maxCost: opMaxCost(input.versioned).toString(),
        requestId: currentRequestId(),
        optimistic: false,
        confirmationBlocks: 5,
        deploysAccount: opDeploys(input.versioned),
        source: "rpc",
      })
      .onConflictDoNothing({ target: transactionIntents.userOperationHash })
      .returning();
  } catch (err) {
    if (!violates(err, DEPLOYER_INDEX)) throw err;
    throw conflict(`Another operation of this service is deploying account ${op.sender}: send this one without initCode (and a nonce after it) once that one has landed.`);
  }
  if (inserted[0]) return { intent: inserted[0], created: true };
  const [existing] = await db
    .select()
    .from(transactionIntents)
    .where(and(eq(transactionIntents.userOperationHash, input.hash.toLowerCase()), eq(transactionIntents.projectId, ctx.projectId), eq(transactionIntents.livemode, ctx.livemode)));
  if (!existing) throw conflict(`Operation ${input.hash} is already known to this service under another project.`);
  return { intent: existing, created: false };
}
