import { and, eq, sql } from "drizzle-orm";
import { decodeFunctionData, getAddress, isAddressEqual, toHex, type Abi, type Address, type Hex } from "viem";
import { z } from "zod";
import { smartAccountAbi } from "@/contracts/artifacts";
import { serviceDeployment } from "@/lib/chain/contracts";
import { latestBlock } from "@/lib/chain/coalesce";
import { chainFor, type ChainConfig } from "@/lib/chain/registry";
import { requiredPrefund, signPaymasterAndData, sponsorshipWindow, stubPaymasterAndData, userOperationHash, type UserOp } from "@/lib/chain/userop";
import type { Db } from "@/lib/db/client";
import { sponsoredOperations, sponsorshipHolds } from "@/lib/db/schema";
import { registeredContractsAt } from "@/lib/contracts/service";
import { ApiError } from "@/lib/http/errors";
import { newId } from "@/lib/ids";
import { checkPolicyAllows, evaluateSponsorship, prepareSponsorship, type RuledCall, type SponsorshipRequest } from "@/lib/policies/evaluate";
import { sponsorshipClock } from "@/lib/sponsorship/budgets";
import { rulesOfPolicies, type PolicyRuleRow } from "@/lib/policies/rules";
import { getPolicy, type PolicyRow } from "@/lib/policies/service";
import type { ProjectContext } from "@/lib/projects/service";
import { checkBounds, GasBoundError, operationBounds } from "./bounds";
import { operationSender, UnknownSenderError, type OperationSender } from "./senders";
import { SPONSORSHIP_SECONDS } from "./sponsor";
import { recordDecline, SponsorshipDeclined } from "@/lib/sponsorship/declines";
import { hold, releaseHold } from "@/lib/sponsorship/ledger";
import { usdPrice } from "@/lib/sponsorship/prices";

/**
 * Our VerifyingPaymaster served over ERC-7677 (JSON-RPC 2.0): pm_getPaymasterStubData, pm_getPaymasterData and
 * pm_supportedEntryPoints, for EntryPoint v0.6. The context names the policy whose rules decide: `{"policy":"pol_…"}`.
 * Anyone holding the publishable key can ask, so what is signed is bounded here, not by the caller: the sender must
 * be the project's account (lib/paymasters/senders.ts), every gas field within the service's own estimate and the
 * chain's fees (lib/paymasters/bounds.ts), the op's most cost under the policy's cap (or the install's default), and
 * each signed op is recorded so the policy's interval rules count it.
 * Errors are JSON-RPC errors (HTTP 200), codes after EIP-1474: -32602 invalid params (bad op, a gas field over its
 * bound, entry point, chain, policy), -32003 refused (the policy's rules, a sender not the project's), -32005 a limit
 * reached, -32002 the chain did not answer, -32601 unknown method, -32600 not a JSON-RPC request, -32603 anything else.
 */

export class RpcError extends Error {
  constructor(
    readonly code: number,
    message: string,
    readonly data?: unknown,
  ) {
    super(message);
  }
}

const invalid = (message: string, data?: unknown) => new RpcError(-32602, message, data);

const quantity = z.string().regex(/^0x[0-9a-fA-F]{1,64}$/, "a 0x-prefixed hex quantity");
const bytes = z.string().regex(/^0x([0-9a-fA-F]{2})*$/, "0x-prefixed hex bytes");
const userOpParam = z.object({
  sender: z.string().refine((v) => /^0x[0-9a-fA-F]{40}$/.test(v), "an address"),
  nonce: quantity,
  initCode: bytes.default("0x"),
  callData: bytes,
  callGasLimit: quantity.default("0x0"),
  verificationGasLimit: quantity.default("0x0"),
  preVerificationGas: quantity.default("0x0"),
  maxFeePerGas: quantity.default("0x0"),
  maxPriorityFeePerGas: quantity.default("0x0"),
});
const contextParam = z.object({ policy: z.string().startsWith("pol_", "a policy id (pol_...)") }, { error: 'context must be an object naming the policy: {"policy":"pol_..."}' });

function parseParam<T>(schema: z.ZodType<T>, value: unknown, name: string): T {
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  const issue = result.error.issues[0]!;
  const at = [name, ...issue.path].join(".");
  throw invalid(`Invalid ${at}: ${issue.message}`);
}

function userOpOf(raw: z.output<typeof userOpParam>): UserOp {
  return {
    sender: getAddress(raw.sender),
    nonce: BigInt(raw.nonce),
    initCode: raw.initCode as Hex,
    callData: raw.callData as Hex,
    callGasLimit: BigInt(raw.callGasLimit),
    verificationGasLimit: BigInt(raw.verificationGasLimit),
    preVerificationGas: BigInt(raw.preVerificationGas),
    maxFeePerGas: BigInt(raw.maxFeePerGas),
    maxPriorityFeePerGas: BigInt(raw.maxPriorityFeePerGas),
    paymasterAndData: "0x",
    signature: "0x",
  };
}

/**
 * The op's calls as policy rules see them. Only our accounts' execute/executeBatch can be read (other accounts'
 * callData says nothing we could check a rule against): anything else is refused. A call's contract is the
 * project's registered contract at its address on the chain whose ABI decodes it (its function named).
 */
export async function ruledCalls(db: Db, ctx: ProjectContext, chainId: number, op: UserOp): Promise<RuledCall[]> {
  let calls: { to: Address; data: Hex }[];
  if (op.callData === "0x") {
    if ((op.initCode ?? "0x") === "0x") throw invalid("The operation has no callData and no initCode: nothing to sponsor.");
    return [{ contractId: null, to: op.sender, functionName: null, self: true }];
  }
  try {
    const decoded = decodeFunctionData({ abi: smartAccountAbi, data: op.callData });
    if (decoded.functionName === "execute") calls = [{ to: decoded.args[0], data: decoded.args[2] }];
    else if (decoded.functionName === "executeBatch") calls = decoded.args[0].map((to, i) => ({ to, data: decoded.args[2][i]! }));
    else calls = [{ to: op.sender, data: op.callData }];
  } catch {
    throw invalid("The operation's callData is not an execute or executeBatch call of this service's smart accounts, so the policy's rules cannot be checked against it.");
  }
  const registered = await registeredContractsAt(db, ctx, chainId, calls.map((c) => c.to));
  return calls.map(({ to, data }) => {
    if (isAddressEqual(to, op.sender)) return { contractId: null, to, functionName: null, self: true };
    const here = registered.get(to.toLowerCase()) ?? [];
    for (const contract of here) {
      try {
        const { functionName } = decodeFunctionData({ abi: contract.abi as Abi, data });
        return { contractId: contract.id, to, functionName, self: false };
      } catch {
        // not this registration's ABI
      }
    }
    return { contractId: here[0]?.id ?? null, to, functionName: null, self: false };
  });
}

/** The policy's own checks for an op the client built: pay_for_user only (a token charge would be a call added to it). */
async function policyFor(db: Db, ctx: ProjectContext, id: string): Promise<{ policy: PolicyRow; rules: PolicyRuleRow[] }> {
  const policy = await getPolicy(db, ctx, id).catch(() => {
    throw invalid(`No such policy: '${id}' (context.policy must name a policy of the project and mode of the key in the URL).`);
  });
  if (policy.sponsorSchema !== "pay_for_user") {
    throw invalid(`Policy ${policy.id} uses ${policy.sponsorSchema}: its token charge is a call the service would have to add to the operation, which the client built. Name a pay_for_user policy.`);
  }
  if (policy.paymasterId) {
    throw invalid(`Policy ${policy.id} is sponsored by registered paymaster ${policy.paymasterId}, not by this service's paymaster: name a policy without a paymaster.`);
  }
  const rules = (await rulesOfPolicies(db, ctx, [policy.id])).get(policy.id) ?? [];
  return { policy, rules };
}

interface Request {
  chain: ChainConfig;
  op: UserOp;
  policy: PolicyRow;
  rules: PolicyRuleRow[];
  sender: OperationSender;
  calls: RuledCall[];
}

/** Reads [userOp, entryPoint, chainId, context]: the chain, the op, the named policy and the project's sender. */
async function readRequest(db: Db, ctx: ProjectContext, params: unknown): Promise<Request> {
  if (!Array.isArray(params) || params.length < 3) throw invalid("params must be [userOperation, entryPoint, chainId, context].");
  const [rawOp, entryPoint, chainIdHex, context] = params as unknown[];
  if (typeof entryPoint !== "string" || !/^0x[0-9a-fA-F]{40}$/.test(entryPoint) || !isAddressEqual(entryPoint as Address, serviceDeployment().entryPoint)) {
    throw invalid(`Unsupported entryPoint ${String(entryPoint)}: this paymaster works with EntryPoint v0.6 at ${serviceDeployment().entryPoint}.`);
  }
  const chainId = Number(parseParam(quantity, chainIdHex, "chainId"));
  let chain: ChainConfig;
  try {
    chain = chainFor(ctx, chainId);
  } catch (err) {
    throw invalid((err as Error).message);
  }
  const op = userOpOf(parseParam(userOpParam, rawOp, "userOperation"));
  const { policy: policyId } = parseParam(contextParam, context, "context");
  const { policy, rules } = await policyFor(db, ctx, policyId);
  let sender: OperationSender;
  try {
    sender = await operationSender(db, ctx, chainId, op, policy);
  } catch (err) {
    if (err instanceof UnknownSenderError) throw new RpcError(-32003, err.message, { policy: { value: policy.id, message: `sender ${err.sender} is not the project's` } });
    throw err;
  }
  const calls = await ruledCalls(db, ctx, chainId, op);
  return { chain, op, policy, rules, sender, calls };
}

/** The op's calls as an approval webhook is shown them: execute/executeBatch decoded (ruledCalls refused anything else). */
function operationCalls(op: UserOp): { to: Address; data: Hex; value: bigint }[] {
  try {
    const decoded = decodeFunctionData({ abi: smartAccountAbi, data: op.callData });
    if (decoded.functionName === "execute") return [{ to: decoded.args[0], value: decoded.args[1], data: decoded.args[2] }];
    if (decoded.functionName === "executeBatch") return decoded.args[0].map((to, i) => ({ to, value: decoded.args[1][i] ?? 0n, data: decoded.args[2][i]! }));
  } catch {
    // a bare deployment (empty callData)
  }
  return [];
}

/** What the policy's checks judge: `price` and `chainTime` read before any transaction (and recorded with the hold). */
const sponsorshipRequest = (req: Request, maxCost: bigint, read: { price?: number | null; chainTime?: Date } = {}): SponsorshipRequest => ({
  playerId: req.sender.playerId,
  accountId: req.sender.accountId ?? req.sender.address.toLowerCase(),
  address: req.op.sender,
  chainId: req.chain.chainId,
  calls: req.calls,
  operationCalls: operationCalls(req.op),
  maxCost,
  // The stub is asked before the op's fees are final: its fee is judged with the final data.
  ...(maxCost > 0n && { maxFeePerGas: req.op.maxFeePerGas }),
  usdPrice: read.price ?? null,
  ...(read.chainTime && { chainTime: read.chainTime }),
  source: "erc7677",
  operation: { sender: req.op.sender, nonce: req.op.nonce },
});

/**
 * pm_getPaymasterData: the op's gas fields bounded by the service's own estimate and the chain's fees (chain calls,
 * before any transaction), then in one transaction the policy's rules (with this op's most cost) and its record, so
 * the policy's interval rules count it; then our paymaster's signature.
 */
async function sponsorOperation(db: Db, ctx: ProjectContext, params: unknown): Promise<Hex> {
  const req = await readRequest(db, ctx, params);
  return noted(db, ctx, req, () => sponsorRead(db, ctx, req));
}

/** A refusal to sponsor is recorded (the dashboard's declines by reason) once its transaction has rolled back. */
async function noted<T>(db: Db, ctx: ProjectContext, req: Request, run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (err) {
    if (err instanceof SponsorshipDeclined) {
      await recordDecline(db, ctx, err, { chainId: req.chain.chainId, playerId: req.sender.playerId, accountId: req.sender.accountId, source: "erc7677" });
    }
    throw err;
  }
}

async function sponsorRead(db: Db, ctx: ProjectContext, req: Request): Promise<Hex> {
  const { chain, op } = req;
  checkPolicyAllows(req.policy, req.rules, sponsorshipRequest(req, 0n));
  try {
    checkBounds(op, await operationBounds(chain, op));
  } catch (err) {
    if (err instanceof GasBoundError) throw invalid(err.message, { field: err.field, value: toHex(err.value), bound: toHex(err.bound) });
    throw err;
  }
  const [window, price, chainTime] = await Promise.all([sponsorshipWindow(chain, SPONSORSHIP_SECONDS), usdPrice(chain), sponsorshipClock(chain)]);
  // Signed here, but the signature leaves the service only once the op's most cost is held (the transaction below).
  const paymasterAndData = await signPaymasterAndData(chain, op, window);
  const signed = { ...op, paymasterAndData };
  const maxCost = requiredPrefund(signed);
  const request = { ...sponsorshipRequest(req, maxCost, { price, chainTime }), userOperationHash: userOperationHash(chain, signed) };
  // Time windows, gas price and approval webhooks, outside the transaction (a webhook waits on the developer's server).
  await prepareSponsorship(db, ctx, req.policy, req.rules, request);
  await db.transaction(async (tx) => {
    await evaluateSponsorship(tx, req.policy, req.rules, request);
    const record = {
      policyId: req.policy.id,
      playerId: req.sender.playerId,
      accountId: req.sender.accountId,
      maxCost: maxCost.toString(),
      userOperationHash: userOperationHash(chain, signed),
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
    // Asked again for the same nonce: only one op of it can land, so the earlier signature's hold is replaced by this one's.
    const [earlier] = await tx
      .select({ id: sponsorshipHolds.id })
      .from(sponsorshipHolds)
      .where(and(eq(sponsorshipHolds.sponsoredOperationId, row!.id), eq(sponsorshipHolds.status, "held")));
    if (earlier) await releaseHold(tx, earlier.id);
    await hold(tx, ctx, {
      chainId: chain.chainId,
      amount: maxCost,
      cause: "erc7677",
      usdPrice: price,
      chainTime,
      sponsoredOperationId: row!.id,
      policyId: req.policy.id,
      playerId: req.sender.playerId,
      accountId: req.sender.accountId,
      // Never seen on chain by the end of its window (and the chain past it): released by the watcher.
      expiresAt: new Date(window.validUntil * 1000),
    });
  });
  return paymasterAndData;
}

/** One JSON-RPC call, answered or thrown as RpcError / ApiError. */
export async function paymasterRpc(db: Db, ctx: ProjectContext, method: string, params: unknown): Promise<unknown> {
  switch (method) {
    case "pm_supportedEntryPoints":
      return [serviceDeployment().entryPoint];
    case "pm_getPaymasterStubData": {
      // The stub is asked before the op's gas is known: its bounds and cost are checked when the final data is asked.
      const req = await readRequest(db, ctx, params);
      await noted(db, ctx, req, () => db.transaction((tx) => evaluateSponsorship(tx, req.policy, req.rules, sponsorshipRequest(req, 0n))));
      return { paymasterAndData: stubPaymasterAndData(Number((await latestBlock(req.chain)).timestamp)), sponsor: { name: "Self-hosted paymaster" }, isFinal: false };
    }
    case "pm_getPaymasterData":
      return { paymasterAndData: await sponsorOperation(db, ctx, params) };
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
