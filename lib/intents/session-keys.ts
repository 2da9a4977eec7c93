import { and, desc, eq, inArray, isNull } from "drizzle-orm";
import { decodeFunctionData, getAddress, isAddressEqual, size, type Address, type Hex } from "viem";
import { simple7702AccountAbi, smartAccountAbi } from "@/contracts/artifacts";
import { chainNow, chainTime, readKey } from "@/lib/session-keys/chain";
import { onChain, publicClient } from "@/lib/chain/clients";
import type { ChainConfig } from "@/lib/chain/registry";
import { opDeploys, opMaxCost, opSigner, opSponsored, type VersionedOp } from "@/lib/intent-records/versioned-op";
import type { Queryable, Tx } from "@/lib/db/client";
import { sessions, transactionIntents } from "@/lib/db/schema";
import { badRequest, referenced } from "@/lib/errors";
import type { ProjectContext } from "@/lib/tenant";
import { getSession } from "@/lib/session-keys/service";
import { accountCalls } from "./operation-calls";

/**
 * The account's intents already signed by `key` and not settled: the contract counts a use when it validates an
 * op, so each of these will take one of the key's uses. Counted by recovering each in-flight op's signer (an
 * account has few in flight), which also covers keys registered without the sessions API.
 */
export async function inFlightUses(db: Queryable, chainId: number, accountId: string, key: Address): Promise<number> {
  const rows = await db
    .select({ hash: transactionIntents.userOperationHash, op: transactionIntents.userOperation })
    .from(transactionIntents)
    .where(and(eq(transactionIntents.chainId, chainId), eq(transactionIntents.accountId, accountId), inArray(transactionIntents.status, ["pending", "broadcast"])));
  let count = 0;
  for (const row of rows) {
    const signer = await opSigner(row.op, row.hash as Hex);
    if (signer && isAddressEqual(signer, key)) count += 1;
  }
  return count;
}

/** The targets an op's callData calls, or why a session key may not sign it at all (only execute/executeBatch). */
function targetsOf(account: Address, callData: Hex): Address[] | string {
  let name: string | undefined;
  // v0.6 SmartAccount's execute/executeBatch, or v0.8 BaseAccount's (executeBatch of Call[]).
  for (const abi of [smartAccountAbi, simple7702AccountAbi]) {
    try {
      name ??= size(callData) >= 4 ? decodeFunctionData({ abi, data: callData }).functionName : undefined;
    } catch {
      // not this version's
    }
  }
  if (name !== "execute" && name !== "executeBatch") {
    return `a session key may only sign calls through execute or executeBatch, and this operation calls ${name ?? "the account directly"}`;
  }
  return accountCalls(account, callData).map((c) => c.to);
}

export interface SessionKeyCheck {
  chain: ChainConfig;
  account: { id: string; address: Address };
  key: Address;
  op: VersionedOp;
}

/** Why the key's fee cap refuses the op (the account's own validation would: AA24), or null. */
function feeRefusal(key: Address, cap: bigint, op: SessionKeyCheck["op"]): string | null {
  if (opSponsored(op)) return null;
  // The prefund without a paymaster ((callGasLimit + verificationGasLimit + preVerificationGas) × maxFeePerGas, either
  // version): the most the op can cost the account, tip included.
  const cost = opMaxCost(op);
  if (cost <= cap) return null;
  if (cap === 0n) {
    return `session key ${key} signs only operations a paymaster pays for (it was registered without maxFeePerOp), and this one would make the account pay up to ${cost} wei in fees: create the intent under a policy that sponsors it`;
  }
  return `this operation may make the account pay up to ${cost} wei in fees ((callGasLimit + verificationGasLimit + preVerificationGas) × maxFeePerGas), over session key ${key}'s cap of ${cap} wei per operation (maxFeePerOp): sponsor it under a policy, or register the key with a higher maxFeePerOp`;
}

/**
 * Why `key` may not sign `op` for the account now, as the contract and the EntryPoint would judge it, or null when
 * it may: registered and active, inside its window by the chain's clock (tests move it), a use left once the
 * key's in-flight intents are counted, only execute/executeBatch calls to whitelisted targets other than the
 * account, its fee within the key's maxFeePerOp unless a paymaster pays, on a deployed account. In two steps: what
 * the chain says is read now (outside any transaction: a chain call must not hold one open); the judge returned
 * counts the in-flight uses where it is called, without asking the chain again. Callers call it under the key's
 * lock (lockSessionKey), in the transaction that acts on the answer.
 */
export async function sessionKeyJudge(check: SessionKeyCheck): Promise<(db: Queryable) => Promise<{ why: string; unknownKey: boolean } | null>> {
  const seen = await chainRefusal(check);
  return async (db) => {
    const why = typeof seen === "string" ? seen : await usesRefusal(db, check, seen);
    if (why === null) return null;
    return { why, unknownKey: why === UNKNOWN_KEY || why === UNDEPLOYED };
  };
}

const UNKNOWN_KEY = "not a session key of the account";
const UNDEPLOYED = "the account is not deployed, and session keys live on a deployed account";

/** What the chain refuses, or the key's uses as the chain counts them. */
async function chainRefusal({ chain, account, key, op }: SessionKeyCheck): Promise<string | { used: number; limit: number }> {
  const [code, state, now] = await Promise.all([
    onChain(chain, () => publicClient(chain).getCode({ address: account.address })),
    !opDeploys(op) ? readKey(chain, account.address, key) : null,
    chainNow(chain),
  ]);
  if (!code || !state) return UNDEPLOYED;
  if (state.limit === 0) return UNKNOWN_KEY;
  if (!state.active) return `session key ${key} was revoked (or retired by a change of the account's owner)`;
  if (now < state.validAfter) return `session key ${key} is not valid yet: valid from ${chainTime(state.validAfter)}, and the chain's time is ${chainTime(now)}`;
  if (now >= state.validUntil) return `session key ${key} expired at ${chainTime(state.validUntil)} (the chain's time is ${chainTime(now)})`;
  const targets = targetsOf(account.address, op.op.callData);
  if (typeof targets === "string") return targets;
  for (const target of targets) {
    if (isAddressEqual(target, account.address)) return `a session key may not call the account itself (${account.address})`;
    if (state.whitelist.length && !state.whitelist.some((allowed) => isAddressEqual(allowed, target))) {
      return `target ${getAddress(target)} is not in session key ${key}'s whitelist (${state.whitelist.join(", ")})`;
    }
  }
  const fee = feeRefusal(key, state.maxFeePerOp, op);
  if (fee) return fee;
  return { used: state.used, limit: state.limit };
}

async function usesRefusal(db: Queryable, { chain, account, key }: SessionKeyCheck, state: { used: number; limit: number }): Promise<string | null> {
  const inFlight = await inFlightUses(db, chain.chainId, account.id, key);
  if (state.used + inFlight >= state.limit) {
    return `session key ${key} has no uses left: ${state.used} of its ${state.limit} used on chain and ${inFlight} more signed and in flight`;
  }
  return null;
}

/** The sessions row of `key` on the account (the latest not revoked), to record which session signed an intent. */
export async function sessionOfKey(db: Queryable, accountId: string, key: Address): Promise<string | null> {
  const [row] = await db
    .select({ id: sessions.id })
    .from(sessions)
    .where(and(eq(sessions.accountId, accountId), eq(sessions.address, getAddress(key)), isNull(sessions.revokedAt)))
    .orderBy(desc(sessions.createdAt))
    .limit(1);
  return row?.id ?? null;
}

/**
 * An intent created with `session`: built for that session's key to sign (no service signature, even on a custodial
 * account, so it waits in awaiting_signature with nextAction), refused before it is recorded when the key could not
 * sign it now. `account` is the session's; the intent's own account, if named, must be it.
 */
export async function sessionSigning(db: Queryable, ctx: ProjectContext, chain: ChainConfig, input: { session: string; account?: string; chainId: number }) {
  const session = await referenced(getSession(db, ctx, input.session), "session", input.session);
  const refuse = (why: string) => badRequest(`Session ${session.id} cannot sign this intent: ${why}.`, { session: { value: session.id, message: why } });
  if (input.account && input.account !== session.accountId) throw refuse(`it is a session of account ${session.accountId}, not ${input.account}`);
  if (session.chainId !== input.chainId) throw refuse(`it is on chain ${session.chainId}, not ${input.chainId}`);
  if (session.revokedAt) throw refuse("it was revoked");
  const key = session.address as Address;
  return {
    accountId: session.accountId,
    sessionId: session.id,
    // The chain is asked before the transaction that records the intent; the in-flight uses are counted in it.
    prepareCheck: async (op: VersionedOp) => {
      const judge = await sessionKeyJudge({ chain, account: { id: session.accountId, address: op.op.sender }, key, op });
      return async (tx: Tx) => {
        const refused = await judge(tx);
        if (refused) throw refuse(refused.why);
      };
    },
  };
}
