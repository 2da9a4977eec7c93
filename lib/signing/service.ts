import { eq, ilike } from "drizzle-orm";
import { decodeFunctionData, formatEther, type Abi, type Hex } from "viem";
import { getAccount } from "@/lib/accounts/service";
import { findChain } from "@/lib/chain/registry";
import { decodedJson } from "@/lib/contracts/decoded-json";
import { getContract } from "@/lib/contracts/service";
import type { Db, Queryable } from "@/lib/db/client";
import { contracts } from "@/lib/db/schema";
import { inScope } from "@/lib/db/scope";
import { ApiError, conflict, missing } from "@/lib/errors";
import { validate } from "@/lib/http/validate";
import { relayIntent } from "@/lib/intents/dispatch";
import { signatureInput } from "@/lib/intents/schema";
import { isFinal } from "@/lib/intents/search";
import { getIntent, type IntentRow } from "@/lib/intents/service";
import { signingOwner } from "@/lib/accounts/token-bound";
import { submitSignature } from "@/lib/intents/signature";
import { deserializeUserOpV08, isStoredV08, isUnsignedAuthorization, userOperationTypedDataJson } from "@/lib/intent-records/versioned-op";
import { getPolicy } from "@/lib/policies/service";
import type { ProjectContext } from "@/lib/tenant";
import type { DecodedCall } from "@/lib/intents/operation-calls";
import { decodeIntentOperation } from "./operation";
import { linkExpiry, SigningLinkError, verifySigningToken, type LinkProblem } from "@/lib/intents/signing-link";

/** One interaction as the developer declared it (the op's own calls are in `SigningView.calls`). */
export interface SigningInteraction {
  to: string;
  contract: { id: string; name: string } | null;
  functionName: string | null;
  /** The arguments as JSON, when the function is known. */
  args: string | null;
  /** Raw call data, when no registered ABI decodes it. */
  data: string | null;
  /** The native amount sent along, e.g. "0.5 ETH". */
  value: string;
}

/** What the signing page shows of an intent awaiting its owner's signature. */
export interface SigningView {
  intentId: string;
  chainId: number;
  chainName: string;
  accountId: string;
  accountAddress: string;
  ownerAddress: string;
  userOperationHash: Hex;
  /** Who pays the gas: the project's policy, or the account itself. */
  policy: { id: string; name: string } | null;
  /** Every step of the userOperation the owner signs, decoded from its initCode and callData. */
  calls: DecodedCall[];
  /** What the developer declared: the op may carry more (the service as guardian, a token charge). */
  interactions: SigningInteraction[];
  /** When the link (and, when sponsored, the sponsorship) runs out, in Unix seconds. */
  expiresAt: number;
  /**
   * EntryPoint v0.8 accounts: the EIP-712 typed data of the packed op, whose digest is the userOperationHash the account
   * checks (signed with eth_signTypedData_v4); absent for v0.6 accounts (personal_sign of the hash).
   */
  typedData?: Record<string, unknown>;
  /**
   * A delegated EOA's first operation: the EIP-7702 authorization it still needs. Browser wallets do not sign those for
   * web pages, so the page says what the owner's own client must sign instead.
   */
  authorization?: { contractAddress: string; chainId: number; nonce: number };
}

/** An intent's progress after signing, for the page to poll. */
export interface SigningStatus {
  status: IntentRow["status"];
  confirmed: boolean;
  final: boolean;
  transactionHash: string | null;
  error: string | null;
}

export type SigningPage =
  | { state: "awaiting"; view: SigningView }
  | { state: "not_awaiting"; status: SigningStatus }
  | { state: "invalid"; problem: LinkProblem | "not_found"; message: string };

export const signingStatus = (row: IntentRow): SigningStatus => ({
  status: row.status,
  confirmed: row.confirmedAt !== null,
  final: isFinal(row),
  transactionHash: row.transactionHash,
  error: row.error,
});

/** The intent a link opens: its token checked, the intent looked up in the token's project and mode. */
async function intentOfLink(db: Queryable, token: string, intentId: string): Promise<{ ctx: ProjectContext; intent: IntentRow }> {
  const ctx = await verifySigningToken(token, intentId);
  try {
    return { ctx, intent: await getIntent(db, ctx, intentId) };
  } catch (err) {
    // A valid token for an intent that is gone (its player deleted): the link leads nowhere.
    if (err instanceof ApiError && err.status === 404) throw missing("This transaction intent no longer exists.");
    throw err;
  }
}

/** A registered contract of the project at `address` on the chain, for naming and decoding a raw call. */
async function contractAt(db: Queryable, ctx: ProjectContext, chainId: number, address: string) {
  const [row] = await db
    .select()
    .from(contracts)
    .where(inScope(contracts, ctx, eq(contracts.chainId, chainId), eq(contracts.deleted, false), ilike(contracts.address, address)));
  return row ?? null;
}

async function describeInteraction(db: Queryable, ctx: ProjectContext, intent: IntentRow, item: Record<string, unknown>, symbol: string): Promise<SigningInteraction> {
  const value = `${formatEther(BigInt(String(item.value ?? "0")))} ${symbol}`;
  const named = typeof item.functionName === "string" ? { functionName: item.functionName, args: decodedJson(item.functionArgs ?? []) } : null;
  if (typeof item.contract === "string") {
    const contract = await getContract(db, ctx, item.contract);
    return { to: contract.address, contract: { id: contract.id, name: contract.name ?? contract.id }, functionName: named?.functionName ?? null, args: named?.args ?? null, data: null, value };
  }
  const to = String(item.to ?? "");
  const data = typeof item.data === "string" && item.data !== "0x" ? item.data : null;
  const contract = /^0x[0-9a-fA-F]{40}$/.test(to) ? await contractAt(db, ctx, intent.chainId, to) : null;
  const ref = contract ? { id: contract.id, name: contract.name ?? contract.id } : null;
  if (named) return { to, contract: ref, ...named, data: null, value };
  if (contract && data) {
    try {
      const decoded = decodeFunctionData({ abi: contract.abi as Abi, data: data as Hex });
      return { to, contract: ref, functionName: decoded.functionName, args: decodedJson(decoded.args ?? []), data: null, value };
    } catch {
      // Not a function of the registered ABI: shown as raw data.
    }
  }
  return { to, contract: ref, functionName: null, args: null, data, value };
}

/** What will be executed, in the terms the owner can check: chain, account, calls, who pays. */
export async function signingView(db: Queryable, ctx: ProjectContext, intent: IntentRow): Promise<SigningView> {
  const account = await getAccount(db, ctx, intent.accountId);
  const chain = findChain(intent.chainId);
  const policy = intent.policyId ? await getPolicy(db, ctx, intent.policyId) : null;
  return {
    intentId: intent.id,
    chainId: intent.chainId,
    chainName: chain?.name ?? `chain ${intent.chainId}`,
    accountId: account.id,
    accountAddress: account.address,
    // Token-bound accounts: the token's holder now (control follows the token); the stored owner when it is gone.
    ownerAddress: await signingOwner(account).catch(() => account.ownerAddress),
    userOperationHash: intent.userOperationHash as Hex,
    policy: policy ? { id: policy.id, name: policy.name } : null,
    calls: await decodeIntentOperation(db, ctx, intent, policy),
    interactions: await Promise.all(intent.interactions.map((item) => describeInteraction(db, ctx, intent, item, chain?.nativeCurrency.symbol ?? "ETH"))),
    expiresAt: linkExpiry(intent),
    ...v08Signing(intent),
  };
}

/** What a v0.8 intent's page needs beyond the hash: its typed data, and the authorization it may still lack. */
function v08Signing(intent: IntentRow): Pick<SigningView, "typedData" | "authorization"> {
  if (!isStoredV08(intent.userOperation)) return {};
  const op = deserializeUserOpV08(intent.userOperation);
  const auth = op.authorization;
  return {
    typedData: userOperationTypedDataJson({ chainId: intent.chainId }, op),
    ...(auth && isUnsignedAuthorization(auth) ? { authorization: { contractAddress: auth.address, chainId: auth.chainId, nonce: auth.nonce } } : {}),
  };
}

/**
 * What the signing page shows for a link: the intent to sign while it awaits its owner's
 * signature, its state once it no longer does, or why the link does not open anything.
 */
export async function openSigningLink(db: Queryable, token: string | undefined, intentId: string): Promise<SigningPage> {
  try {
    if (!token) throw new SigningLinkError("invalid");
    const { ctx, intent } = await intentOfLink(db, token, intentId);
    if (intent.status !== "awaiting_signature") return { state: "not_awaiting", status: signingStatus(intent) };
    return { state: "awaiting", view: await signingView(db, ctx, intent) };
  } catch (err) {
    if (err instanceof SigningLinkError) return { state: "invalid", problem: err.problem, message: err.message };
    if (err instanceof ApiError && err.status === 404) return { state: "invalid", problem: "not_found", message: err.message };
    throw err;
  }
}

/**
 * The owner's signature, sent from the signing page: checked and relayed by the very functions
 * behind POST /v1/transaction_intents/{id}/signature (a wrong signer is refused there).
 */
export async function submitLinkSignature(db: Db, token: string, intentId: string, body: Record<string, unknown>): Promise<SigningStatus> {
  const { ctx, intent } = await intentOfLink(db, token, intentId);
  if (intent.status !== "awaiting_signature") {
    throw conflict(`This transaction intent no longer awaits a signature (it is ${intent.status}).`);
  }
  const { signature } = validate(signatureInput, { signature: body.signature });
  const signed = await submitSignature(db, ctx, intentId, signature as Hex);
  return signingStatus(await relayIntent(db, signed, false));
}

/** The intent's progress for the page's polling: the link keeps reading it after signing, until it expires. */
export async function linkStatus(db: Queryable, token: string, intentId: string): Promise<SigningStatus> {
  return signingStatus((await intentOfLink(db, token, intentId)).intent);
}
