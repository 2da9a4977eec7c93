// eth_sendUserOperation (v0.6 here, v0.8's checks in send-v08.ts): a client's signed op checked (shape, entry point, sender, gas, sponsorship on record, the
// EntryPoint's own validation), then recorded as an intent of its account and relayed as owner-signed intents are.
import { decodeErrorResult, encodeFunctionData, getAddress, isAddressEqual, slice, type Address, type Hex } from "viem";
import { entryPointAbi } from "@/contracts/artifacts";
import { onChain, publicClient } from "@/lib/chain/clients";
import { serviceDeployment } from "@/lib/chain/contracts";
import type { ChainConfig } from "@/lib/chain/registry";
import {
  describeRevert,
  paymasterPays,
  preVerificationGas,
  revertDataOf,
  toEntryPointOp,
  userOperationHash,
  UserOperationRejectedError,
  type UserOp,
  type UserOpV08,
} from "@/lib/chain/userop";
import type { Db } from "@/lib/db/client";
import { relayIntent } from "@/lib/intents/dispatch";
import { intentOfOperation, recordClientOperation, type ClientOperation } from "@/lib/intents/external";
import { submitSignature } from "@/lib/intents/signature";
import { metrics } from "@/lib/metrics";
import { operationCalls } from "@/lib/paymasters/calls";
import type { ProjectContext } from "@/lib/tenant";
import { BundlerCode, invalidParams, RpcError } from "./errors";
import { entryPointOf, positional, sendableOperation } from "./params";
import { projectSender } from "./sender";
import { checkV08, hashV08 } from "./send-v08";
import { checkGas } from "./gas";
import { sponsorshipOnRecord } from "./sponsorship";

/** Any address with no code takes the EntryPoint's compensation in a validation call (the zero address is refused, AA90). */
const PROBE_BENEFICIARY: Address = "0x000000000000000000000000000000000000dEaD";


export async function sendUserOperation(db: Db, ctx: ProjectContext, chain: ChainConfig, params: unknown): Promise<Hex> {
  const [rawOp, rawEntryPoint] = positional(params, 2, "userOperation, entryPoint");
  const { version } = entryPointOf(chain, rawEntryPoint);
  const versioned = sendableOperation(rawOp, version);
  if (versioned.version === "0.8") return sendV08(db, ctx, chain, versioned.op);
  const op = versioned.op;
  const hash = userOperationHash(chain, op);

  const known = await intentOfOperation(db, ctx, chain.chainId, hash);
  if (known) return resent(db, ctx, known, op.signature);

  const sender = await projectSender(db, ctx, chain.chainId, op.sender, "0.6");
  await checkGasV06(chain, op);
  const policyId = await sponsorshipOf(db, ctx, chain, op, hash);
  await validate(chain, op);
  return record(db, ctx, chain, { ...sender, versioned, hash, policyId });
}

/** v0.8: the sender first (a Delegated_v08 op's hash may need its current delegate), then as v0.6 (send-v08.ts). */
async function sendV08(db: Db, ctx: ProjectContext, chain: ChainConfig, op: UserOpV08): Promise<Hex> {
  const sender = await projectSender(db, ctx, chain.chainId, op.sender, "0.8");
  const { hash, current } = await hashV08(chain, op, sender);
  const known = await intentOfOperation(db, ctx, chain.chainId, hash);
  if (known) return resent(db, ctx, known, op.signature);
  const { policyId } = await checkV08(db, ctx, chain, op, hash, current);
  return record(db, ctx, chain, { ...sender, versioned: { version: "0.8", op }, hash, policyId });
}

/** A checked op recorded as an intent of its account and handed to the relay (once: a resend finds the same intent). */
async function record(db: Db, ctx: ProjectContext, chain: ChainConfig, input: Omit<ClientOperation, "interactions">): Promise<Hex> {
  const { hash } = input;
  const interactions = operationCalls(input.versioned).map((c) => ({ to: c.to, value: c.value.toString(), data: c.data }));
  const { intent, created } = await recordClientOperation(db, ctx, chain, { ...input, interactions });
  if (created) {
    metrics.intents.inc({ outcome: "created" });
    await relayIntent(db, intent, false);
  }
  return hash;
}

/**
 * The same op sent again: the same hash, never a second intent. An intent of the API awaiting its owner's signature
 * (its userOperation handed to a wallet) takes the signature this way as through POST …/signature.
 */
async function resent(db: Db, ctx: ProjectContext, intent: Awaited<ReturnType<typeof intentOfOperation>> & object, signature: Hex): Promise<Hex> {
  const hash = intent.userOperationHash as Hex;
  if (intent.status === "awaiting_signature") {
    const signed = await submitSignature(db, ctx, intent.id, signature);
    await relayIntent(db, signed, false);
    return hash;
  }
  // Refused by the relay or cancelled without landing: say so rather than answer a hash that will never land.
  if ((intent.status === "failed" && !intent.response) || intent.status === "cancelled") {
    throw new RpcError(BundlerCode.rejected, `Operation ${hash} was ${intent.status === "cancelled" ? "cancelled" : "rejected"}: ${intent.error ?? "no reason recorded"}.`, {
      transactionIntent: intent.id,
    });
  }
  return hash;
}

/** Gas fields a bundle can carry and that pay for it (v0.6: a paymaster's verification counts three times). */
const checkGasV06 = (chain: ChainConfig, op: UserOp) =>
  checkGas(chain, op, {
    calldataGas: preVerificationGas(op),
    totalGas: op.callGasLimit + op.verificationGasLimit * (paymasterPays(op.paymasterAndData) ? 3n : 1n) + op.preVerificationGas,
  });

/**
 * The policy whose ERC-7677 sponsorship this op carries, or null when the account pays. Only this service's paymaster
 * is relayed (another paymaster's validation could pass here and fail in the bundle at our executors' cost), and only
 * for the exact op it signed in this project: that record's hold is what the landing settles.
 */
async function sponsorshipOf(db: Db, ctx: ProjectContext, chain: ChainConfig, op: UserOp, hash: Hex): Promise<string | null> {
  if (!paymasterPays(op.paymasterAndData)) return null;
  const { paymaster } = serviceDeployment();
  const named = getAddress(slice(op.paymasterAndData!, 0, 20));
  if (!isAddressEqual(named, paymaster)) {
    throw invalidParams(
      `userOperation.paymasterAndData names paymaster ${named}: this bundler relays operations paid by their account or sponsored by this service's paymaster ${paymaster} (pm_getPaymasterData at this URL).`,
      "userOperation.paymasterAndData",
    );
  }
  return sponsorshipOnRecord(db, ctx, chain, hash, "userOperation.paymasterAndData");
}


/**
 * The EntryPoint's own validation of the op as a bundle would run it (handleOps, called, not sent): account
 * deployment, nonce, signature (AA24), prefund, the paymaster's signature and window (AA3x). Its FailedOp is thrown
 * as UserOperationRejectedError; a call that reverts inside the op is not a refusal (it lands, as failed).
 */
async function validate(chain: ChainConfig, op: UserOp): Promise<void> {
  const data = encodeFunctionData({ abi: entryPointAbi, functionName: "handleOps", args: [[toEntryPointOp(op)], PROBE_BENEFICIARY] });
  let revert: Hex | undefined;
  try {
    await onChain(chain, () => publicClient(chain).call({ to: serviceDeployment().entryPoint, data }));
    return;
  } catch (err) {
    revert = revertDataOf(err);
    if (revert === undefined) throw err;
  }
  let decoded;
  try {
    decoded = decodeErrorResult({ abi: entryPointAbi, data: revert });
  } catch {
    throw new UserOperationRejectedError(`validation reverted: ${describeRevert(revert)}`);
  }
  if (decoded.errorName === "FailedOp") throw new UserOperationRejectedError(decoded.args[1], Number(decoded.args[0]));
  throw new RpcError(BundlerCode.rejected, `The EntryPoint refused the operation: ${decoded.errorName}.`);
}
