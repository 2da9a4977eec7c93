// Bundles: ops ordered and screened by simulating handleOps, then sent as one handleOps transaction per EntryPoint
// and awaited (split when too large, screened and resent when they cannot land); or each op sent through the chain's
// bundler. A v0.8 bundle whose ops carry EIP-7702 authorizations goes as a type-4 transaction with them.
import {
  BaseError,
  decodeErrorResult,
  encodeFunctionData,
  isAddressEqual,
  RpcRequestError,
  type Address,
  type Hex,
  type SignedAuthorization,
} from "viem";
import { formatUserOperationRequest } from "viem/account-abstraction";
import { entryPointAbi, entryPointV08Abi } from "@/contracts/artifacts";
import { redactUrl } from "@/lib/redact";
import { publicClient } from "@/lib/chain/clients";
import { entryPointOf } from "@/lib/chain/contracts";
import { authorizationProblem, delegateOfCode } from "@/lib/chain/eip7702";
import type { ChainConfig, EntryPointVersion } from "@/lib/chain/registry";
import {
  chainFees,
  describeRevert,
  failedOpV08,
  revertDataOf,
  toEntryPointOp,
  toPackedOp,
  UserOperationRejectedError,
  type UserOp,
  type UserOpV08,
} from "@/lib/chain/userop";
import { bundlerFor, pollMs, relayerEvents, relayFor, sleep, state } from "./config";
import { pickExecutor } from "./executors";
import { findUserOperationReceipt, receiptsFromLogs, waitForUserOperationReceipt } from "./receipts";
import { NonceTakenError, sendBundle, waitMined } from "./send";
import type { BundleResult, RelayedUserOperationReceipt, RelayResult } from "./types";
import { log } from "@/lib/log";
import { metrics } from "@/lib/metrics";

/** An op in the relay: its EntryPoint version, the op and its userOp hash. */
export type Entry = { version: "0.6"; op: UserOp; hash: Hex } | { version: "0.8"; op: UserOpV08; hash: Hex };

const deploys = (entry: Entry) => (entry.version === "0.8" ? !!entry.op.factory : (entry.op.initCode ?? "0x") !== "0x");

/**
 * Each sender's ops, in the places its ops had, reordered: the deploying one (initCode) first, as the others only
 * validate once it ran, then by nonce (same key: sequence order).
 */
export function orderForBundle(entries: Entry[]): Entry[] {
  const bySender = new Map<string, Entry[]>();
  for (const entry of entries) {
    const sender = entry.op.sender.toLowerCase();
    bySender.set(sender, [...(bySender.get(sender) ?? []), entry]);
  }
  for (const ops of bySender.values()) {
    ops.sort((a, b) => {
      if (deploys(a) !== deploys(b)) return deploys(a) ? -1 : 1;
      return a.op.nonce < b.op.nonce ? -1 : a.op.nonce > b.op.nonce ? 1 : 0;
    });
  }
  const taken = new Map<string, number>();
  return entries.map((entry) => {
    const sender = entry.op.sender.toLowerCase();
    const i = taken.get(sender) ?? 0;
    taken.set(sender, i + 1);
    return bySender.get(sender)![i]!;
  });
}

/** handleOps of the entries' EntryPoint (all of one version): v0.6's UserOperation[] or v0.8's PackedUserOperation[]. */
function handleOpsData(entries: Entry[], beneficiary: Address): Hex {
  if (versionOf(entries) === "0.8") {
    const ops = entries.map((e) => toPackedOp(e.op as UserOpV08));
    return encodeFunctionData({ abi: entryPointV08Abi, functionName: "handleOps", args: [ops, beneficiary] });
  }
  return encodeFunctionData({ abi: entryPointAbi, functionName: "handleOps", args: [entries.map((e) => toEntryPointOp(e.op as UserOp)), beneficiary] });
}

const versionOf = (entries: Entry[]): EntryPointVersion => entries[0]?.version ?? "0.6";

/** The EIP-7702 authorizations the bundle transaction must carry: one per sender, of ops whose delegation is not in place. */
async function authorizationsOf(chain: ChainConfig, entries: Entry[]): Promise<SignedAuthorization[]> {
  const bySender = new Map<string, SignedAuthorization>();
  for (const entry of entries) {
    if (entry.version !== "0.8" || !entry.op.authorization) continue;
    if (!bySender.has(entry.op.sender.toLowerCase())) bySender.set(entry.op.sender.toLowerCase(), entry.op.authorization);
  }
  const needed = await Promise.all(
    [...bySender.entries()].map(async ([sender, authorization]) => {
      const delegate = delegateOfCode(await publicClient(chain).getCode({ address: sender as Address }));
      return delegate && isAddressEqual(delegate, authorization.address) ? null : authorization;
    }),
  );
  return needed.filter((a): a is SignedAuthorization => a !== null);
}

/**
 * Ops whose authorization would not take effect (a node skips it silently, and the EntryPoint then reverts the whole
 * bundle on an EOA without code): dropped before simulation, with why.
 */
async function screenAuthorizations(chain: ChainConfig, entries: Entry[]) {
  const needed = await authorizationsOf(chain, entries);
  const problems = new Map<string, string>();
  await Promise.all(
    needed.map(async (authorization) => {
      const sender = entries.find((e) => e.op.authorization === authorization)!.op.sender;
      const problem = await authorizationProblem(chain, sender, authorization);
      if (problem) problems.set(sender.toLowerCase(), problem);
    }),
  );
  const dropped: { userOpHash: Hex; error: Error }[] = [];
  const kept = entries.filter((entry) => {
    const problem = entry.op.authorization ? problems.get(entry.op.sender.toLowerCase()) : undefined;
    if (problem) dropped.push({ userOpHash: entry.hash, error: new UserOperationRejectedError(problem) });
    return !problem;
  });
  const authorizationList = needed.filter((a) => kept.some((e) => e.op.authorization === a));
  return { kept, dropped, authorizationList };
}

/** The call reverted (the node said so), whatever its data. */
const isRevert = (err: unknown) => err instanceof BaseError && /revert/i.test(err.message);

/** The EntryPoint's FailedOp(index, reason) in a reverted call's error (v0.8: FailedOpWithRevert too), if that is what it is. */
function failedOpOf(err: unknown, version: EntryPointVersion = "0.6"): { index: number; reason: string } | null {
  const data = revertDataOf(err);
  if (!data) return null;
  if (version === "0.8") return failedOpV08(data);
  try {
    const decoded = decodeErrorResult({ abi: entryPointAbi, data });
    if (decoded.errorName === "FailedOp") return { index: Number(decoded.args[0]), reason: decoded.args[1] };
  } catch {
    // not a FailedOp
  }
  return null;
}

/**
 * One op's handleOps reverted without data, where the EntryPoint names the op it rejects (FailedOp): its sender has no
 * code and the op no initCode (v0.6 decodes validateUserOp's empty answer outside its try/catch), which is AA20; or
 * the node's state is in motion (right after a reorg): null, once the next block is in, to simulate it again.
 */
async function emptyRevert(chain: ChainConfig, entry: Entry): Promise<UserOperationRejectedError | null> {
  const authorized = entry.version === "0.8" && !!entry.op.authorization;
  if (!deploys(entry) && !authorized && (await publicClient(chain).getCode({ address: entry.op.sender })) === undefined) {
    return new UserOperationRejectedError("AA20 account not deployed");
  }
  log.info({ chainId: chain.chainId, userOpHash: entry.hash }, "relay: one op's simulation reverted without data; simulated again at the next block");
  await nextBlock(chain, NEXT_BLOCK_WAIT_MS);
  return null;
}

/** How long a simulation that reverted without data waits for the next block before it runs again anyway. */
const NEXT_BLOCK_WAIT_MS = 15_000;

/** Until the chain's head moves past the one seen now (or `timeoutMs` passes). */
async function nextBlock(chain: ChainConfig, timeoutMs: number) {
  const client = publicClient(chain);
  const start = await client.getBlockNumber({ cacheTime: 0 });
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    await sleep(Math.max(pollMs(chain), 250));
    if ((await client.getBlockNumber({ cacheTime: 0 })) > start) return;
  }
}

/**
 * Static simulation of handleOps (eth_estimateGas, which also gives the gas): an op failing validation makes the
 * EntryPoint revert with FailedOp(index, reason); it is dropped with that reason and the rest simulated again.
 * An op already on chain is reported with its receipt instead.
 */
async function screen(chain: ChainConfig, entries: Entry[], beneficiary: Address) {
  const version = versionOf(entries);
  const entryPoint = entryPointOf(version);
  const authorizations = version === "0.8" ? await screenAuthorizations(chain, entries) : { kept: entries, dropped: [], authorizationList: [] };
  const kept = [...authorizations.kept];
  const dropped: { userOpHash: Hex; error: Error }[] = [...authorizations.dropped];
  for (const { userOpHash, error } of authorizations.dropped) relayerEvents().emit("op:dropped", { chainId: chain.chainId, userOpHash, error });
  const landed: { entry: Entry; receipt: RelayedUserOperationReceipt }[] = [];
  // The authorizations of the ops still in (a dropped op's goes with it).
  const authorizationListOf = (ops: Entry[]) =>
    authorizations.authorizationList.filter((a) => ops.some((e) => e.version === "0.8" && e.op.authorization === a));
  let lookedAgain = false;
  while (kept.length > 0) {
    const authorizationList = authorizationListOf(kept);
    try {
      const estimate = await publicClient(chain).estimateGas({
        account: beneficiary,
        to: entryPoint,
        data: handleOpsData(kept, beneficiary),
        ...(authorizationList.length > 0 && { authorizationList }),
      });
      return { kept, dropped, landed, gas: (estimate * 12n) / 10n + 20_000n, authorizationList };
    } catch (err) {
      const data = revertDataOf(err);
      const failed = failedOpOf(err, version);
      if (!failed || failed.index >= kept.length) {
        // The first time only: a second empty revert stands (below).
        if (kept.length === 1 && !lookedAgain && (!data || data === "0x") && (data !== undefined || isRevert(err))) {
          lookedAgain = true;
          const rejection = await emptyRevert(chain, kept[0]!);
          if (!rejection) continue;
          dropped.push({ userOpHash: kept[0]!.hash, error: rejection });
          relayerEvents().emit("op:dropped", { chainId: chain.chainId, userOpHash: kept[0]!.hash, error: rejection });
          kept.length = 0;
          break;
        }
        if (data !== undefined && kept.length === 1) {
          dropped.push({ userOpHash: kept[0]!.hash, error: new UserOperationRejectedError(`handleOps reverted: ${describeRevert(data)}`) });
          kept.length = 0;
          break;
        }
        // A revert that names no op, in a bundle of several: which one cannot be told here; the bundle is halved.
        if (kept.length > 1 && (data !== undefined || isRevert(err))) return { kept, dropped, landed, gas: 0n, authorizationList: [] as SignedAuthorization[], unscreened: true };
        throw err;
      }
      const [entry] = kept.splice(failed.index, 1) as [Entry];
      // An op already on chain fails as "nonce used" (AA25), or "already constructed" (AA10) with its initCode.
      if (/^AA(10|25)/.test(failed.reason)) {
        const receipt = await findUserOperationReceipt(chain, entry.hash);
        if (receipt) {
          landed.push({ entry, receipt });
          continue;
        }
      }
      const error = new UserOperationRejectedError(failed.reason);
      dropped.push({ userOpHash: entry.hash, error });
      relayerEvents().emit("op:dropped", { chainId: chain.chainId, userOpHash: entry.hash, error });
    }
  }
  return { kept, dropped, landed, gas: 0n, authorizationList: [] as SignedAuthorization[] };
}

type Dropped = { userOpHash: Hex; error: Error }[];
/** Every op was left out: the first one's error, and all of them. */
type NothingSent = { error: Error; dropped: Dropped };
type Relayed = BundleResult | NothingSent;

/** Several outcomes as one; the first bundle that sent something names the transaction. */
function combine(parts: Relayed[], alreadyLanded: RelayResult[], dropped: Dropped): Relayed {
  const included = [...alreadyLanded, ...parts.flatMap((p) => ("included" in p ? p.included : []))];
  const allDropped = [...dropped, ...parts.flatMap((p) => p.dropped)];
  const sent = parts.find((p): p is BundleResult => "included" in p);
  if (sent) return { ...sent, included, dropped: allDropped };
  const first = included[0];
  if (first) {
    return { transactionHash: first.transactionHash, executor: null, blockNumber: first.receipt.blockNumber, gasUsed: 0n, included, dropped: allDropped };
  }
  return { error: allDropped[0]!.error, dropped: allDropped };
}

/** Screens, sends and awaits one bundle; a bundle that cannot land as sent is screened and sent again (3 times). */
export async function relayBundle(chain: ChainConfig, entries: Entry[], attempt: number): Promise<Relayed> {
  const fees = await chainFees(chain);
  // The beneficiary only matters for the simulation's gas; any of our executors will do.
  const probe = relayFor(chain).executors[0]!.account.address;
  const screened = await screen(chain, entries, probe);
  const alreadyLanded = screened.landed.map(({ entry, receipt }) => ({
    userOpHash: entry.hash,
    transactionHash: receipt.transactionHash,
    executor: null,
    receipt,
    bundleSize: 0,
  }));
  if (screened.kept.length === 0) return combine([], alreadyLanded, screened.dropped);
  // Too much gas for one bundle, or a revert that names no op: in halves, each screened on its own.
  if (("unscreened" in screened && screened.unscreened) || (screened.gas > state().config.maxBundleGas && screened.kept.length > 1)) {
    const half = Math.ceil(screened.kept.length / 2);
    const parts = await Promise.all([
      relayBundle(chain, screened.kept.slice(0, half), attempt),
      relayBundle(chain, screened.kept.slice(half), attempt),
    ]);
    return combine(parts, alreadyLanded, screened.dropped);
  }

  const executor = await pickExecutor(chain, screened.gas * fees.maxFeePerGas);
  const events = relayerEvents();
  try {
    const call = {
      to: entryPointOf(versionOf(screened.kept)),
      data: handleOpsData(screened.kept, executor.account.address),
      gas: screened.gas,
      authorizationList: screened.authorizationList,
    };
    const started = Date.now();
    const first = await sendBundle(chain, executor, call, fees);
    metrics.bundleOps.observe({ chain: String(chain.chainId) }, screened.kept.length);
    events.emit("bundle:sent", {
      chainId: chain.chainId,
      executor: executor.account.address,
      nonce: first.nonce,
      transactionHash: first.hash,
      fees,
      ops: screened.kept.length,
    });
    let mined;
    try {
      mined = await waitMined(chain, executor, call, first, screened.kept.length);
    } catch (err) {
      if (err instanceof NonceTakenError && attempt < 3) {
        executor.nextNonce = null;
        return combine([await relayBundle(chain, screened.kept, attempt + 1)], alreadyLanded, screened.dropped);
      }
      throw err;
    }
    const { receipt } = mined;
    events.emit("bundle:mined", {
      chainId: chain.chainId,
      executor: executor.account.address,
      nonce: mined.sent.nonce,
      transactionHash: receipt.transactionHash,
      ops: screened.kept.length,
      gasUsed: receipt.gasUsed,
      ms: Date.now() - started,
    });
    // handleOps reverted on chain (state changed since simulation): simulate again and resend what still passes.
    if (receipt.status !== "success") {
      if (attempt < 3) return combine([await relayBundle(chain, screened.kept, attempt + 1)], alreadyLanded, screened.dropped);
      throw new Error(`Bundle ${receipt.transactionHash} reverted on chain`);
    }
    const receipts = receiptsFromLogs(receipt.logs, receipt.transactionHash, receipt.blockNumber);
    const included: RelayResult[] = [...alreadyLanded];
    const dropped = [...screened.dropped];
    for (const entry of screened.kept) {
      const opReceipt = receipts.get(entry.hash);
      if (opReceipt) {
        included.push({
          userOpHash: entry.hash,
          transactionHash: receipt.transactionHash,
          executor: executor.account.address,
          receipt: opReceipt,
          bundleSize: screened.kept.length,
          transaction: receipt,
        });
      } else {
        dropped.push({ userOpHash: entry.hash, error: new Error(`Operation ${entry.hash} is missing from bundle ${receipt.transactionHash}`) });
      }
    }
    return {
      transactionHash: receipt.transactionHash,
      executor: executor.account.address,
      blockNumber: receipt.blockNumber,
      gasUsed: receipt.gasUsed,
      included,
      dropped,
    };
  } finally {
    executor.inflight--;
  }
}

/** ERC-7769's codes for an op the bundler refuses (-32500…-32508 validation, signature, stake…; -32521 reverted), and -32602 invalid fields. */
const refusalCode = (code: number) => code === -32602 || code === -32521 || (code <= -32500 && code >= -32508);

/** Why handleOps would refuse the op: the EntryPoint's "AAxx …" reason, or null if it would take it (or the node did not say). */
async function handleOpsRefusal(chain: ChainConfig, entry: Entry): Promise<string | null> {
  const probe = relayFor(chain).executors[0]!.account.address;
  const authorizationList = entry.version === "0.8" ? await authorizationsOf(chain, [entry]) : [];
  try {
    await publicClient(chain).estimateGas({
      account: probe,
      to: entryPointOf(entry.version),
      data: handleOpsData([entry], probe),
      ...(authorizationList.length > 0 && { authorizationList }),
    });
    return null;
  } catch (err) {
    return failedOpOf(err, entry.version)?.reason ?? null;
  }
}

type BundlerAnswer = { sent: true } | { landed: RelayedUserOperationReceipt } | { error: unknown };

/**
 * What a bundler's error to eth_sendUserOperation means. "Already known": it holds the op (a resubmission after a
 * restart), so it was sent. An AA code: refused with the EntryPoint's reason, unless it is AA10/AA25 for an op that
 * already landed, which gets its receipt (as self-bundling does). A refusal without an AA code (alto reports a bad v0.6
 * signature as -32507 "Invalid UserOperation signature or paymaster signature": AA24 or AA34) gets the EntryPoint's
 * reason from a handleOps simulation. Anything else (unreachable bundler, a refusal the EntryPoint would not make)
 * passes through, to be retried.
 */
async function bundlerAnswer(chain: ChainConfig, entry: Entry, err: unknown): Promise<BundlerAnswer> {
  const rpc = err instanceof BaseError ? err.walk((e) => e instanceof RpcRequestError) : null;
  if (!(rpc instanceof RpcRequestError)) return { error: err };
  // The bundler's own message: the error's full message also quotes the request, whose hex must not be searched.
  const message = rpc.details;
  let reason = /\b(AA\d\d\b.*)/.exec(message)?.[1]?.trim();
  if (!reason && /already known/i.test(message)) return { sent: true };
  if (!reason && refusalCode(rpc.code)) reason = (await handleOpsRefusal(chain, entry)) ?? undefined;
  if (!reason) return { error: err };
  if (/^AA(10|25)\b/.test(reason)) {
    const receipt = await findUserOperationReceipt(chain, entry.hash);
    if (receipt) return { landed: receipt };
  }
  return { error: new UserOperationRejectedError(reason) };
}

export async function relayThroughBundler(chain: ChainConfig, entry: Entry): Promise<RelayResult> {
  const entryPoint = entryPointOf(entry.version);
  // The RPC shape of the op's version: v0.8 unpacked (factory, paymaster fields, eip7702Auth).
  const request = formatUserOperationRequest(entry.version === "0.8" ? entry.op : toEntryPointOp(entry.op));
  const answer = await bundlerFor(chain)
    .request({ method: "eth_sendUserOperation", params: [request, entryPoint] })
    .then(
      (hash): BundlerAnswer => {
        // A bundler hashing for another chain or EntryPoint would have us wait for a receipt that never comes.
        if (hash.toLowerCase() !== entry.hash.toLowerCase()) {
          throw new Error(`The bundler at ${redactUrl(chain.bundlerUrl!)} returned hash ${hash} for user operation ${entry.hash}: is it for chain ${chain.chainId} and EntryPoint ${entryPoint}?`);
        }
        return { sent: true };
      },
      (err: unknown) => bundlerAnswer(chain, entry, err),
    );
  if ("error" in answer) throw answer.error;
  const receipt = "landed" in answer ? answer.landed : await waitForUserOperationReceipt(chain, entry.hash, { timeoutMs: state().config.mineTimeoutMs });
  return { userOpHash: entry.hash, transactionHash: receipt.transactionHash, executor: null, receipt, bundleSize: 1 };
}
