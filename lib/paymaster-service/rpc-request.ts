// What an ERC-7677 call asks: [userOperation, entryPoint, chainId, context] read into the chain, the op of the
// EntryPoint's version, the policy the context names and the project's sender, each bad part a -32602 naming it.
import { isAddressEqual, type Address } from "viem";
import { z } from "zod";
import { offeredEntryPoints } from "@/lib/chain/contracts";
import { chainFor, type ChainConfig } from "@/lib/chain/registry";
import type { Db } from "@/lib/db/client";
import type { RuledCall } from "@/lib/policies/evaluate";
import { rulesOfPolicies, type PolicyRuleRow } from "@/lib/policies/rules";
import { getPolicy, type PolicyRow } from "@/lib/policies/service";
import type { ProjectContext } from "@/lib/tenant";
import { ruledCalls } from "@/lib/paymasters/calls";
import { address, bytes, initCodeOf, otherVersionField, quantity, sponsorableV08, toUserOp06, toUserOpV08, type EntryPointVersion, type VersionedUserOp } from "@/lib/paymasters/op-params";
import { RpcError } from "@/lib/paymasters/rpc-error";
import { checkDelegation, operationSender, UnknownSenderError, type OperationSender } from "@/lib/paymasters/senders";

export const invalid = (message: string, data?: unknown) => new RpcError(-32602, message, data);

const userOpParam06 = z.object({
  sender: address,
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
  throw invalid(`Invalid ${at}: ${issue.message}`, { field: at });
}


/** The op of `version`'s shape; the other version's fields in it are a -32602 (it was meant for the other EntryPoint). */
export function sponsorableOperation(raw: unknown, version: EntryPointVersion): VersionedUserOp {
  const stray = otherVersionField(raw, version);
  if (stray) {
    throw invalid(`Invalid userOperation.${stray}: it is a field of EntryPoint v${version === "0.6" ? "0.8" : "0.6"} operations, and this one is asked for the v${version} EntryPoint.`, {
      field: `userOperation.${stray}`,
    });
  }
  if (version === "0.8") return { version, op: toUserOpV08(parseParam(sponsorableV08, raw, "userOperation")) };
  return { version, op: toUserOp06({ ...parseParam(userOpParam06, raw, "userOperation"), paymasterAndData: "0x", signature: "0x" }) };
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

export interface SponsorRequest {
  chain: ChainConfig;
  versioned: VersionedUserOp;
  policy: PolicyRow;
  rules: PolicyRuleRow[];
  sender: OperationSender;
  calls: RuledCall[];
  /** A v0.8 op repeating the 7702 marker without an authorization: the EOA's delegate its hash binds. */
  delegate?: Address;
}

/** The EntryPoint version of `raw` among those the chain offers, or a -32602 listing them. */
export function entryPointVersionOf(chain: ChainConfig, raw: unknown): EntryPointVersion {
  const offered = offeredEntryPoints(chain);
  const found = typeof raw === "string" && /^0x[0-9a-fA-F]{40}$/.test(raw) ? offered.find((e) => isAddressEqual(e.address, raw as Address)) : undefined;
  if (!found) {
    throw invalid(`Unsupported entryPoint ${String(raw)}: this paymaster works on chain ${chain.chainId} with ${offered.map((e) => `EntryPoint v${e.version} at ${e.address}`).join(" and ")}.`, {
      field: "entryPoint",
    });
  }
  return found.version;
}

/** Reads [userOp, entryPoint, chainId, context]: the chain, the op of its EntryPoint's version, the named policy and the project's sender. */
export async function readRequest(db: Db, ctx: ProjectContext, params: unknown): Promise<SponsorRequest> {
  if (!Array.isArray(params) || params.length < 3) throw invalid("params must be [userOperation, entryPoint, chainId, context].");
  const [rawOp, entryPoint, chainIdHex, context] = params as unknown[];
  const chainId = Number(parseParam(quantity, chainIdHex, "chainId"));
  let chain: ChainConfig;
  try {
    chain = chainFor(ctx, chainId);
  } catch (err) {
    throw invalid((err as Error).message, { field: "chainId" });
  }
  const versioned = sponsorableOperation(rawOp, entryPointVersionOf(chain, entryPoint));
  const { policy: policyId } = parseParam(contextParam, context, "context");
  const { policy, rules } = await policyFor(db, ctx, policyId);
  let sender: OperationSender;
  try {
    sender = await operationSender(db, ctx, chainId, { sender: versioned.op.sender, initCode: initCodeOf(versioned), version: versioned.version }, policy);
  } catch (err) {
    if (err instanceof UnknownSenderError) throw new RpcError(-32003, err.message, { policy: { value: policy.id, message: `sender ${err.sender} is not the project's` } });
    throw err;
  }
  const delegate = versioned.version === "0.8" ? (await checkDelegation(chain, versioned.op, sender.accountType)).delegate : undefined;
  const calls = await ruledCalls(db, ctx, chainId, versioned, (message) => invalid(message));
  return { chain, versioned, policy, rules, sender, calls, ...(delegate && { delegate }) };
}
