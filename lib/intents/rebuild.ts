import { and, eq, sql } from "drizzle-orm";
import { isAddressEqual, type Hex } from "viem";
import { getAccount } from "@/lib/accounts/service";
import { deploymentOf } from "@/lib/chain/accounts";
import { publicClient } from "@/lib/chain/clients";
import type { ChainConfig } from "@/lib/chain/registry";
import { estimateUserOperation, signUserOperation } from "@/lib/chain/userop";
import type { Db } from "@/lib/db/client";
import { transactionIntents } from "@/lib/db/schema";
import { getDeveloperAccount } from "@/lib/developer-accounts/service";
import { serviceAccount } from "@/lib/keys/service-keys";
import { sponsorOf } from "@/lib/paymasters/sponsor";
import { getPolicy } from "@/lib/policies/service";
import { developerSender, playerSender, type IntentSender } from "./sender";
import type { IntentRow } from "./service";
import { intentHoldAny } from "@/lib/sponsorship/ledger";
import { addSignature } from "@/lib/sponsorship/signatures";
import { planOperationV08 } from "./operation-v08";
import { deserializeUserOp } from "@/lib/intent-records/userop-json";
import { deserializeUserOpV08, hashOp, isStoredV08, opDeploys, opMaxCost, opSigner, signatureFacts, signOp, storeOp, type VersionedOp } from "@/lib/intent-records/versioned-op";

/**
 * The intent's sender with the key the service signs its op with again: the service's guardian key for an op the
 * guardian signed (recovery), else the owner key it holds (custodial); null when the owner signs (non-custodial) or
 * the account is gone.
 */
export async function signingSender(db: Db, intent: IntentRow): Promise<IntentSender | null> {
  // A client built and signed it (the bundler RPC): its calls, gas and paymaster data are the client's, never rebuilt here.
  if (intent.source === "rpc") return null;
  const ctx = { projectId: intent.projectId, livemode: intent.livemode };
  try {
    const sender = intent.accountId.startsWith("dac_")
      ? developerSender(await getDeveloperAccount(db, ctx, intent.accountId), intent.chainId)
      : await playerSender(db, await getAccount(db, ctx, intent.accountId));
    const guardian = serviceAccount("guardian");
    const signedBy = await opSigner(intent.userOperation, intent.userOperationHash as Hex);
    if (signedBy && isAddressEqual(signedBy, guardian.address)) return { ...sender, signer: guardian };
    // A session's key signed it: the owner key must not stand in for it (the key's window, uses and whitelist would not hold).
    if (intent.sessionId && signedBy && !isAddressEqual(signedBy, sender.ownerAddress)) return null;
    return sender.signer ? sender : null;
  } catch {
    // Deleted, or no longer custodial: nobody can sign a rebuilt op.
    return null;
  }
}

export interface RebuildOptions {
  /** The op deploys the account (carries its initCode); otherwise it runs once the account has code. */
  deploy: boolean;
}

/**
 * Rebuilds a pending custodial intent's op (same calls, fresh gas, fees and sponsorship window, signed again by the
 * service) and records it, so its relay sends the new one. The same nonce is kept: the old op and the new one can
 * never both land. With `deploy`, the intent becomes its account's deployer, which fails
 * (unique violation of DEPLOYER_INDEX) if another live intent already is. The policy that accepted the intent is
 * not asked again, but its paymaster signs again (ours, or its ERC-7677 service). Returns false when the intent is no
 * longer pending.
 */
export async function rebuildIntent(db: Db, intent: IntentRow, chain: ChainConfig, sender: IntentSender, options: RebuildOptions): Promise<boolean> {
  if (isStoredV08(intent.userOperation)) return rebuildV08(db, intent, chain, sender, options);
  const old = deserializeUserOp(intent.userOperation);
  const ctx = { projectId: intent.projectId, livemode: intent.livemode };
  const paymaster = intent.sponsored ? await sponsorOf(db, ctx, chain, await getPolicy(db, ctx, intent.policyId!)) : null;
  const undeployed = !options.deploy && (await publicClient(chain).getCode({ address: sender.address })) === undefined;
  // With defaultGuardian, the factory makes the service the guardian at deployment.
  const factoryInitCode = deploymentOf(sender).initCode;
  const { op: built } = await estimateUserOperation(chain, {
    sender: sender.address,
    initCode: options.deploy || undeployed ? factoryInitCode : "0x",
    deployedFirst: !options.deploy,
    callData: old.callData,
    nonceKey: old.nonce >> 64n,
    sponsored: paymaster !== null,
    ...(paymaster && { paymasterStub: paymaster.stub }),
  });
  let op = built;
  if (paymaster) op = { ...op, paymasterAndData: await paymaster.sign(op) };
  op = await signUserOperation(chain, op, sender.signer!);
  return recordRebuilt(db, intent, chain, { version: "0.6", op });
}

/** rebuildIntent of a v0.8 op: the same callData; the factory call, or a custodial EOA's fresh EIP-7702 authorization, when it deploys. */
async function rebuildV08(db: Db, intent: IntentRow, chain: ChainConfig, sender: IntentSender, options: RebuildOptions): Promise<boolean> {
  const old = deserializeUserOpV08(intent.userOperation);
  const ctx = { projectId: intent.projectId, livemode: intent.livemode };
  const policy = intent.sponsored ? await getPolicy(db, ctx, intent.policyId!) : null;
  const undeployed = !options.deploy && (await publicClient(chain).getCode({ address: sender.address })) === undefined;
  const { op, paymaster } = await planOperationV08(
    chain,
    sender,
    { calls: [], callData: old.callData, policy, nonceKey: old.nonce >> 64n },
    null,
    options.deploy || undeployed,
  );
  const sponsored = paymaster ? { ...op, paymasterData: await paymaster.sign(op) } : op;
  return recordRebuilt(db, intent, chain, await signOp(chain, { version: "0.8", op: sponsored }, sender.signer!));
}

/**
 * Records the rebuilt op in place of the old one (still pending, same hash as read) and its new signature of our
 * paymaster under the intent's hold: the old signature may still land (same nonce: only one of them can), so the hold
 * covers the costlier of the two, never less.
 */
async function recordRebuilt(db: Db, intent: IntentRow, chain: ChainConfig, op: VersionedOp): Promise<boolean> {
  const maxCost = opMaxCost(op);
  const hash = hashOp(chain, op);
  return db.transaction(async (tx) => {
    const rows = await tx
      .update(transactionIntents)
      .set({
        userOperation: storeOp(op),
        userOperationHash: hash,
        maxCost: maxCost.toString(),
        deploysAccount: opDeploys(op),
        updatedAt: sql`now()`,
      })
      .where(and(eq(transactionIntents.id, intent.id), eq(transactionIntents.status, "pending"), eq(transactionIntents.userOperationHash, intent.userOperationHash)))
      .returning({ id: transactionIntents.id });
    // Declined when the balance cannot cover a costlier signature: the intent fails.
    const held = rows.length ? await intentHoldAny(tx, intent.id) : null;
    const facts = signatureFacts(chain, op, hash);
    if (held && facts) await addSignature(tx, held.id, facts);
    return rows.length > 0;
  });
}
