import { and, eq, sql } from "drizzle-orm";
import { toHex, type Address, type Hex } from "viem";
import { entryPointOf, offeredEntryPoints, serviceDeployment } from "@/lib/chain/contracts";
import { latestBlock } from "@/lib/chain/coalesce";
import { supportedChains, type ChainConfig } from "@/lib/chain/registry";
import {
  requiredPrefund,
  requiredPrefundV08,
  signPaymasterAndData,
  sponsorshipWindow,
  sponsorUserOperationV08,
  stubPaymasterAndData,
  stubPaymasterV08,
  userOperationHash,
  userOperationHashV08,
  type SponsorshipWindow,
  type UserOpV08,
} from "@/lib/chain/userop";
import type { Db } from "@/lib/db/client";
import { paymasterSignatures, sponsoredOperations, sponsorshipHolds } from "@/lib/db/schema";
import { inScope } from "@/lib/db/scope";
import { ApiError } from "@/lib/errors";
import { newId } from "@/lib/ids";
import { checkPolicyAllows, evaluateSponsorship, prepareSponsorship, type SponsorshipRequest } from "@/lib/policies/evaluate";
import { sponsorshipClock } from "@/lib/sponsorship/budgets";
import type { ProjectContext } from "@/lib/tenant";
import { checkBounds, checkBoundsV08, GasBoundError, operationBounds, operationBoundsV08 } from "@/lib/paymasters/bounds";
import { operationCalls } from "@/lib/paymasters/calls";
import { RpcError } from "@/lib/paymasters/rpc-error";
import { invalid, readRequest, type SponsorRequest } from "./rpc-request";
import { SPONSORSHIP_SECONDS } from "@/lib/paymasters/sponsor";
import { recordDecline, SponsorshipDeclined } from "@/lib/sponsorship/declines";
import { hold } from "@/lib/sponsorship/ledger";
import { addSignature, signatureRow, type SignatureFacts } from "@/lib/sponsorship/signatures";
import { usdPrice } from "@/lib/sponsorship/prices";

/**
 * Our VerifyingPaymaster served over ERC-7677 (JSON-RPC 2.0): pm_getPaymasterStubData, pm_getPaymasterData and
 * pm_supportedEntryPoints, for EntryPoint v0.6 (VerifyingPaymaster, paymasterAndData) and v0.8
 * (VerifyingPaymasterV8: paymaster, paymasterData and its two gas limits, EIP-7702 ops of Delegated_v08 accounts). The context names the policy whose rules decide: `{"policy":"pol_…"}`.
 * Anyone holding the publishable key can ask, so what is signed is bounded here, not by the caller: the sender must
 * be the project's account (lib/paymasters/senders.ts), every gas field within the service's own estimate and the
 * chain's fees (lib/paymasters/bounds.ts), the op's most cost under the policy's cap (or the install's default), and
 * each signed op is recorded so the policy's interval rules count it.
 * Errors are JSON-RPC errors (HTTP 200), codes after EIP-1474: -32602 invalid params (bad op, a gas field over its
 * bound, entry point, chain, policy), -32003 refused (the policy's rules, a sender not the project's), -32005 a limit
 * reached, -32002 the chain did not answer, -32601 unknown method, -32600 not a JSON-RPC request, -32603 anything else.
 * It sits above lib/policies (their rules decide), apart from lib/paymasters, which policies use for the paymaster they name.
 */

export { RpcError };

/** What the policy's checks judge: `price` and `chainTime` read before any transaction (and recorded with the hold). */
const sponsorshipRequest = (req: SponsorRequest, maxCost: bigint, read: { price?: number | null; chainTime?: Date } = {}): SponsorshipRequest => ({
  playerId: req.sender.playerId,
  accountId: req.sender.accountId ?? req.sender.address.toLowerCase(),
  address: req.versioned.op.sender,
  chainId: req.chain.chainId,
  calls: req.calls,
  operationCalls: operationCalls(req.versioned),
  maxCost,
  // The stub is asked before the op's fees are final: its fee is judged with the final data.
  ...(maxCost > 0n && { maxFeePerGas: req.versioned.op.maxFeePerGas }),
  usdPrice: read.price ?? null,
  ...(read.chainTime && { chainTime: read.chainTime }),
  source: "erc7677",
  operation: { sender: req.versioned.op.sender, nonce: req.versioned.op.nonce },
});

/** A refusal to sponsor is recorded (the dashboard's declines by reason) once its transaction has rolled back. */
async function noted<T>(db: Db, ctx: ProjectContext, req: SponsorRequest, run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (err) {
    if (err instanceof SponsorshipDeclined) {
      await recordDecline(db, ctx, err, { chainId: req.chain.chainId, playerId: req.sender.playerId, accountId: req.sender.accountId, source: "erc7677" });
    }
    throw err;
  }
}

/** A gas field over its bound as the -32602 the client can act on. */
async function bounded(check: () => Promise<void>): Promise<void> {
  try {
    await check();
  } catch (err) {
    if (err instanceof GasBoundError) throw invalid(err.message, { field: err.field, value: toHex(err.value), bound: toHex(err.bound) });
    throw err;
  }
}

/** The final paymaster fields of a v0.8 op, as ERC-7677 answers them for EntryPoint v0.7+. */
export interface PaymasterDataV08 {
  paymaster: Address;
  paymasterData: Hex;
  paymasterVerificationGasLimit: Hex;
  paymasterPostOpGasLimit: Hex;
}

interface Signed {
  /** What pm_getPaymasterData answers. */
  result: { paymasterAndData: Hex } | PaymasterDataV08;
  maxCost: bigint;
  hash: Hex;
}

/** v0.6: the op's gas bounded, our VerifyingPaymaster's paymasterAndData, its most cost and hash with it. */
async function signV06(req: SponsorRequest & { versioned: { version: "0.6" } }, window: SponsorshipWindow): Promise<Signed> {
  const { chain } = req;
  const op = req.versioned.op;
  const paymasterAndData = await signPaymasterAndData(chain, op, window);
  const signed = { ...op, paymasterAndData };
  return { result: { paymasterAndData }, maxCost: requiredPrefund(signed), hash: userOperationHash(chain, signed) };
}

/**
 * v0.8: our VerifyingPaymasterV8's paymasterData over the op with its paymaster gas limits (the op's own, bounded, or
 * the service's estimate when it names none): the hash covers them, so they are answered with the data. The most
 * cost is requiredPrefundV08 (every limit, the paymaster's included).
 */
async function signV08(req: SponsorRequest & { versioned: { version: "0.8" } }, window: SponsorshipWindow, estimatedPaymasterGas: bigint): Promise<Signed> {
  const { chain } = req;
  const op: UserOpV08 = { ...req.versioned.op, paymasterVerificationGasLimit: req.versioned.op.paymasterVerificationGasLimit ?? estimatedPaymasterGas };
  const signed = await sponsorUserOperationV08(chain, op, window, req.delegate);
  return {
    result: {
      paymaster: signed.paymaster!,
      paymasterData: signed.paymasterData!,
      paymasterVerificationGasLimit: toHex(signed.paymasterVerificationGasLimit ?? 0n),
      paymasterPostOpGasLimit: toHex(signed.paymasterPostOpGasLimit ?? 0n),
    },
    maxCost: requiredPrefundV08(signed),
    hash: userOperationHashV08(chain, signed, req.delegate),
  };
}

/**
 * pm_getPaymasterData: the op's gas fields bounded by the service's own estimate and the chain's fees (chain calls,
 * before any transaction), then in one transaction the policy's rules (with this op's most cost) and its record, so
 * the policy's interval rules count it, and the hold of its most cost keyed by its userOpHash (settled by the
 * landings watcher when that op's UserOperationEvent names our paymaster of its version); then our paymaster's signature.
 */
async function sponsorRead(db: Db, ctx: ProjectContext, req: SponsorRequest): Promise<Signed["result"]> {
  const { chain, versioned } = req;
  const { op } = versioned;
  checkPolicyAllows(req.policy, req.rules, sponsorshipRequest(req, 0n));
  let estimatedPaymasterGas = 0n;
  await bounded(async () => {
    if (versioned.version === "0.6") return checkBounds(versioned.op, await operationBounds(chain, versioned.op));
    const { bounds, paymasterVerificationGasLimit } = await operationBoundsV08(chain, versioned.op);
    estimatedPaymasterGas = paymasterVerificationGasLimit;
    checkBoundsV08({ ...versioned.op, paymasterVerificationGasLimit: versioned.op.paymasterVerificationGasLimit ?? paymasterVerificationGasLimit }, bounds);
  });
  const [window, price, chainTime] = await Promise.all([sponsorshipWindow(chain, SPONSORSHIP_SECONDS), usdPrice(chain), sponsorshipClock(chain)]);
  // Signed here, but the signature leaves the service only once the op's most cost is held (the transaction below).
  const { result, maxCost, hash } =
    req.versioned.version === "0.6"
      ? await signV06(req as SponsorRequest & { versioned: { version: "0.6" } }, window)
      : await signV08(req as SponsorRequest & { versioned: { version: "0.8" } }, window, estimatedPaymasterGas);
  const facts: SignatureFacts = {
    chainId: chain.chainId,
    entryPoint: entryPointOf(versioned.version),
    paymaster: versioned.version === "0.6" ? serviceDeployment().paymaster : serviceDeployment().paymasterV08,
    sender: op.sender,
    nonce: op.nonce,
    userOperationHash: hash,
    maxCost,
    validUntil: window.validUntil,
  };
  // Asked again for a sender and nonce signed before: the earlier signature may still land (only one op of a nonce
  // can), so the operation's hold covers the costlier of them, and its rules judge that cost.
  const [earlier] = await db
    .select({ amount: sponsorshipHolds.amount })
    .from(sponsorshipHolds)
    .innerJoin(sponsoredOperations, eq(sponsoredOperations.id, sponsorshipHolds.sponsoredOperationId))
    .where(
      and(
        inScope(sponsoredOperations, ctx, eq(sponsoredOperations.chainId, chain.chainId)),
        eq(sponsoredOperations.sender, op.sender.toLowerCase()),
        eq(sponsoredOperations.nonce, op.nonce.toString()),
        eq(sponsorshipHolds.status, "held"),
      ),
    );
  const judged = earlier && BigInt(earlier.amount) > maxCost ? BigInt(earlier.amount) : maxCost;
  const request = { ...sponsorshipRequest(req, judged, { price, chainTime }), userOperationHash: hash };
  // Time windows, gas price and approval webhooks, outside the transaction (a webhook waits on the developer's server).
  await prepareSponsorship(db, ctx, req.policy, req.rules, request);
  await db.transaction(async (tx) => {
    await evaluateSponsorship(tx, req.policy, req.rules, request);
    const record = {
      policyId: req.policy.id,
      playerId: req.sender.playerId,
      accountId: req.sender.accountId,
      maxCost: maxCost.toString(),
      userOperationHash: hash,
      createdAt: sql`now()`,
      updatedAt: sql`now()`,
    };
    const [row] = await tx
      .insert(sponsoredOperations)
      .values({ id: newId("sponsoredOperation"), ...ctx, chainId: chain.chainId, sender: op.sender.toLowerCase(), nonce: op.nonce.toString(), ...record })
      .onConflictDoUpdate({
        target: [sponsoredOperations.projectId, sponsoredOperations.livemode, sponsoredOperations.chainId, sponsoredOperations.sender, sponsoredOperations.nonce],
        set: record,
      })
      .returning({ id: sponsoredOperations.id });
    // The operation's live hold takes this signature too (and grows to its cost, never shrinks); none: a new hold.
    const [live] = await tx
      .select({ id: sponsorshipHolds.id })
      .from(sponsorshipHolds)
      .where(and(eq(sponsorshipHolds.sponsoredOperationId, row!.id), eq(sponsorshipHolds.status, "held")));
    if (live) {
      await addSignature(tx, live.id, facts);
      return;
    }
    const held = await hold(tx, ctx, {
      chainId: chain.chainId,
      amount: maxCost,
      cause: "erc7677",
      usdPrice: price,
      chainTime,
      sponsoredOperationId: row!.id,
      policyId: req.policy.id,
      playerId: req.sender.playerId,
      // Budgets per account count the sender the rules judged: the project's account, else its address (a first op's
      // counterfactual account, an outside sender).
      accountId: req.sender.accountId ?? req.sender.address.toLowerCase(),
      // Released by the chain follower once no signature of it can land: a block past this, or its nonce used.
      expiresAt: new Date(window.validUntil * 1000),
    });
    await tx.insert(paymasterSignatures).values(signatureRow(held, facts));
  });
  return result;
}

/**
 * pm_getPaymasterStubData's answer: data of the final length for estimation. For v0.8 the postOp limit (0: none) is
 * given and the verification limit left to the bundler's estimate (viem keeps a stub's limits over the estimate's).
 */
async function stubOf(req: SponsorRequest) {
  const sponsor = { name: "Self-hosted paymaster" };
  if (req.versioned.version === "0.6") return { paymasterAndData: stubPaymasterAndData(Number((await latestBlock(req.chain)).timestamp)), sponsor, isFinal: false };
  const stub = await stubPaymasterV08(req.chain);
  return { paymaster: stub.paymaster, paymasterData: stub.paymasterData, paymasterPostOpGasLimit: toHex(stub.paymasterPostOpGasLimit ?? 0n), sponsor, isFinal: false };
}

/**
 * The EntryPoints this paymaster signs for: those `chain` offers (the bundler RPC knows its chain), else those any
 * chain of the key's mode offers (the /v1 service URL names none; each request's chainId is checked then).
 */
function supportedEntryPoints(ctx: ProjectContext, chain?: ChainConfig): Address[] {
  const chains = chain ? [chain] : supportedChains().filter((c) => c.livemode === ctx.livemode);
  const addresses = new Map<string, Address>();
  for (const c of chains) for (const e of offeredEntryPoints(c)) addresses.set(e.address.toLowerCase(), e.address);
  return [...addresses.values()];
}

/** One JSON-RPC call, answered or thrown as RpcError / ApiError. `chain`: the bundler RPC's URL chain. */
export async function paymasterRpc(db: Db, ctx: ProjectContext, method: string, params: unknown, chain?: ChainConfig): Promise<unknown> {
  switch (method) {
    case "pm_supportedEntryPoints":
      return supportedEntryPoints(ctx, chain);
    case "pm_getPaymasterStubData": {
      // The stub is asked before the op's gas is known: its bounds and cost are checked when the final data is asked.
      const req = await readRequest(db, ctx, params);
      await noted(db, ctx, req, () => db.transaction((tx) => evaluateSponsorship(tx, req.policy, req.rules, sponsorshipRequest(req, 0n))));
      return stubOf(req);
    }
    case "pm_getPaymasterData": {
      const req = await readRequest(db, ctx, params);
      return noted(db, ctx, req, () => sponsorRead(db, ctx, req));
    }
    default:
      throw new RpcError(-32601, `Method not found: ${method}. This paymaster serves pm_getPaymasterStubData, pm_getPaymasterData and pm_supportedEntryPoints.`);
  }
}

/** An error as a JSON-RPC error object: the policy's refusals keep their message and details. */
export function rpcErrorOf(err: unknown): { code: number; message: string; data?: unknown } {
  if (err instanceof RpcError) return { code: err.code, message: err.message, ...(err.data !== undefined && { data: err.data }) };
  // A refusal to sponsor: -32003 with the decline's code and details as the API's 402 names them.
  if (err instanceof SponsorshipDeclined) return { code: -32003, message: err.message, data: { code: err.code, ...err.toJSON().error.details } };
  if (err instanceof ApiError) {
    const body = err.toJSON().error as { message: string; details?: unknown };
    const code = err.status === 429 ? -32005 : err.status >= 500 ? -32002 : body.details && "policy" in (body.details as object) ? -32003 : -32602;
    return { code, message: body.message, ...(body.details !== undefined && { data: body.details }) };
  }
  return { code: -32603, message: "Internal error" };
}

export const rpcId = (raw: unknown): string | number | null => (typeof raw === "string" || typeof raw === "number" ? raw : null);
