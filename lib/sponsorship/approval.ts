// Approval webhooks: before an operation is sponsored, each approval_webhook rule of its policy asks the developer's
// server, and the answer decides. See docs/sponsorship.md "Approval webhooks" for what is sent and how to verify it.
import type { Address, Hex } from "viem";
import type { Queryable } from "@/lib/db/client";
import { webhookDeliveries } from "@/lib/db/schema";
import { RESPONSE_BODY_BYTES } from "@/lib/deliveries/attempt";
import { newSigningSecret, openSigningSecret, sealSigningSecret, standardHeaders } from "@/lib/deliveries/signing";
import { APPROVAL_TOPIC } from "@/lib/deliveries/topics";
import { currentRequestId } from "@/lib/http/request-context";
import { newId } from "@/lib/ids";
import { log } from "@/lib/log";
import { metrics } from "@/lib/metrics";
import { outboundFetch, OutboundRefusedError } from "@/lib/outbound";
import type { RuledCall } from "@/lib/policies/evaluate";
import type { PolicyRuleRow } from "@/lib/policies/rules";
import type { PolicyRow } from "@/lib/policies/service";
import type { ProjectContext } from "@/lib/tenant";
import { declined, type SponsorshipDeclined } from "./declines";
import { usdOf } from "./ledger";

/** A rule's `timeoutMs`: the default when it has none, and the bounds a rule may set (the call is clamped to them too). */
export const APPROVAL_TIMEOUT_MS = { default: 2000, min: 100, max: 10_000 } as const;

/** What a rule without `onError` does when its server cannot be asked: decline (fail closed). */
export const APPROVAL_DEFAULT_ON_ERROR = "decline" as const;

/** The most an answer may hold: `{"sponsor": false, "reason": "…"}` is far less; a longer answer is an error. */
export const APPROVAL_ANSWER_MAX_BYTES = 4096;

/** A reason longer than this is cut (it goes into the 402's message and details). */
const REASON_MAX_CHARS = 500;

/** A new rule's signing secret (`whsec_…`, Standard Webhooks), shown once in the answer that creates the rule. */
export const newApprovalSecret = newSigningSecret;
/** The secret sealed for policy_rules.encrypted_secret: bound to its rule (AAD `signing-secret:<afu_ id>`), as a trigger's is to the trigger. */
export const sealApprovalSecret = (secret: string, ruleId: string) => sealSigningSecret(secret, ruleId);
export const openApprovalSecret = (sealed: string, ruleId: string) => openSigningSecret(sealed, ruleId);

/** One call of the operation, decoded as the service sees it. */
export interface ApprovalCall {
  to: Address;
  /** The project's registered contract (con_) called, when the interaction named one or its address and ABI match one. */
  contractId: string | null;
  /** The function called, as that contract's ABI names it; null for a raw call or one no ABI decodes. */
  functionName: string | null;
  data: Hex;
  value: bigint;
}

/** What is to be sponsored, as the evaluation has it at hand (read before any transaction). */
export interface ApprovalRequest {
  playerId: string | null;
  /** The sender: its id (acc_, or dac_ for a developer account; null for an outside sender over ERC-7677) and address. */
  account: { id: string | null; address: Address };
  chainId: number;
  calls: ApprovalCall[];
  /** The most the operation may cost, in wei (its prefund). */
  maxCost: bigint;
  /** The chain's native coin in USD (lib/sponsorship/prices.ts), read beforehand; null without a price. */
  usdPrice: number | null;
  source: "transaction_intent" | "erc7677";
  /** The userOperation's hash, when the operation is built already. */
  userOperationHash?: Hex;
}

/** The JSON body POSTed to the rule's url (documented in docs/sponsorship.md). */
export interface ApprovalPayload {
  type: typeof APPROVAL_TOPIC;
  /** msg_…: also the `webhook-id` header; fresh for every call. */
  id: string;
  /** Unix seconds. */
  createdAt: number;
  livemode: boolean;
  policy: string;
  rule: string;
  player: string | null;
  account: { id: string | null; address: Address };
  chainId: number;
  calls: { to: Address; contract: string | null; functionName: string | null; data: Hex; value: string }[];
  /** Wei, as a decimal string. */
  maxCost: string;
  /** Dollars with six decimals, as a string; null when the chain has no price. */
  maxCostUsd: string | null;
  source: ApprovalRequest["source"];
  userOperationHash?: Hex;
}

/** What one call decided. `error`: why the server could not be asked (then `approved` follows the rule's onError). */
export interface ApprovalOutcome {
  approved: boolean;
  /** The server's reason, when it gave one. */
  reason?: string;
  error?: string;
  durationMs: number;
}

/**
 * The calls an approval shows: the operation's calls (to, data, value) with what the rules saw of each (contract,
 * function), by position. A bare deployment has no call of its own: its one ruled call (to the account) is shown.
 */
export function approvalCalls(calls: { to: Address; data: Hex; value?: bigint }[], ruled: RuledCall[]): ApprovalCall[] {
  if (calls.length === 0) return ruled.map((r) => ({ to: r.to, contractId: r.contractId, functionName: r.functionName, data: "0x", value: 0n }));
  return calls.map((call, i) => ({ to: call.to, contractId: ruled[i]?.contractId ?? null, functionName: ruled[i]?.functionName ?? null, data: call.data, value: call.value ?? 0n }));
}

/** The body of one call to `rule`, with a fresh message id. */
export function approvalPayload(ctx: ProjectContext, policy: PolicyRow, rule: PolicyRuleRow, request: ApprovalRequest, now = Date.now()): ApprovalPayload {
  return {
    type: APPROVAL_TOPIC,
    id: newId("message"),
    createdAt: Math.floor(now / 1000),
    livemode: ctx.livemode,
    policy: policy.id,
    rule: rule.id,
    player: request.playerId,
    account: { id: request.account.id, address: request.account.address },
    chainId: request.chainId,
    calls: request.calls.map((c) => ({ to: c.to, contract: c.contractId, functionName: c.functionName, data: c.data, value: c.value.toString() })),
    maxCost: request.maxCost.toString(),
    maxCostUsd: usdOf(request.maxCost, request.usdPrice),
    source: request.source,
    ...(request.userOperationHash && { userOperationHash: request.userOperationHash }),
  };
}

/** The rule's timeout, clamped to the bounds. */
export const approvalTimeoutMs = (rule: Pick<PolicyRuleRow, "timeoutMs">) =>
  Math.min(Math.max(rule.timeoutMs ?? APPROVAL_TIMEOUT_MS.default, APPROVAL_TIMEOUT_MS.min), APPROVAL_TIMEOUT_MS.max);

/** A failure before the request could be sent (no url, no secret). */
class NotAsked extends Error {}

/** Reads at most `max` bytes of the answer (and says whether there was more), under the request's own timeout. */
async function readBounded(res: Response, max: number): Promise<{ bytes: Buffer; over: boolean }> {
  if (!res.body) return { bytes: Buffer.alloc(0), over: false };
  const reader = res.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return { bytes: Buffer.concat(chunks), over: false };
      chunks.push(value);
      size += value.byteLength;
      if (size > max) return { bytes: Buffer.concat(chunks).subarray(0, max), over: true };
    }
  } finally {
    await reader.cancel().catch(() => {});
  }
}

/** `{"sponsor": true|false, "reason"?: string}` (other keys ignored), or null for anything else. */
function parseAnswer(text: string): { sponsor: boolean; reason?: string } | null {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    return null;
  }
  if (typeof json !== "object" || json === null || Array.isArray(json)) return null;
  const { sponsor, reason } = json as Record<string, unknown>;
  if (typeof sponsor !== "boolean") return null;
  if (reason !== undefined && reason !== null && typeof reason !== "string") return null;
  // No control characters (CR/LF) into error messages and logs.
  const cleaned = typeof reason === "string" ? reason.replace(/[\u0000-\u001f\u007f]+/g, " ").trim().slice(0, REASON_MAX_CHARS) : "";
  return cleaned ? { sponsor, reason: cleaned } : { sponsor };
}

const onErrorOf = (rule: PolicyRuleRow) => rule.onError ?? APPROVAL_DEFAULT_ON_ERROR;

/**
 * Asks the rule's server about one operation: POSTs `payload` (JSON) to rule.url through the outbound rule
 * (lib/outbound: https and public addresses only in live mode), signed with the Standard Webhooks headers under the
 * rule's secret, within the rule's timeout (the answer's body included), reading at most APPROVAL_ANSWER_MAX_BYTES.
 * A 2xx answer `{"sponsor": true|false, "reason"?}` decides; anything else (no url or secret, a refused address, no
 * connection, no answer in time, another status, another body) is an error, and the rule's onError decides. Each call
 * is written to the delivery log (webhook_deliveries, topic sponsorship.approval). Never throws for the server's
 * faults. Call it outside any transaction: it waits on a remote server.
 */
export async function askApproval(db: Queryable, ctx: ProjectContext, rule: PolicyRuleRow, payload: ApprovalPayload): Promise<ApprovalOutcome> {
  const timeoutMs = approvalTimeoutMs(rule);
  const body = JSON.stringify(payload);
  const started = Date.now();
  let responseStatus: number | null = null;
  let responseBody: string | null = null;
  let error: string | null = null;
  let answer: { sponsor: boolean; reason?: string } | null = null;
  try {
    if (!rule.url) throw new NotAsked("the rule has no url");
    if (!rule.encryptedSecret) throw new NotAsked("the rule has no signing secret");
    let secret: string;
    try {
      secret = openApprovalSecret(rule.encryptedSecret, rule.id);
    } catch (err) {
      log.warn({ err, rule: rule.id }, "an approval webhook's signing secret could not be opened");
      throw new NotAsked("its signing secret could not be opened");
    }
    const signal = AbortSignal.timeout(timeoutMs);
    // Checked at each call: DNS may have changed since the url was set. Redirects are not followed (a 3xx is an error).
    const res = await outboundFetch(
      rule.url,
      {
        method: "POST",
        headers: { "content-type": "application/json", accept: "application/json", "user-agent": "smart-wallet-service-webhooks", ...standardHeaders(payload.id, body, secret) },
        body,
        signal,
      },
      { livemode: ctx.livemode },
    );
    responseStatus = res.status;
    const { bytes, over } = await readBounded(res, APPROVAL_ANSWER_MAX_BYTES);
    const text = bytes.toString("utf8");
    responseBody = bytes.subarray(0, RESPONSE_BODY_BYTES).toString("utf8");
    if (res.status < 200 || res.status >= 300) error = `answered ${res.status}`;
    else if (over) error = `its answer is larger than ${APPROVAL_ANSWER_MAX_BYTES} bytes`;
    else {
      answer = parseAnswer(text);
      if (!answer) error = `its answer is not {"sponsor": true|false, "reason"?: string}`;
    }
  } catch (err) {
    if (err instanceof NotAsked) error = err.message;
    else if (err instanceof OutboundRefusedError) error = `refused: ${err.message}`;
    else if ((err as Error).name === "TimeoutError") error = `no answer within ${timeoutMs} ms`;
    else error = `could not connect: ${(err as Error).message}`;
    answer = null;
  }
  const durationMs = Date.now() - started;
  const approved = answer ? answer.sponsor : onErrorOf(rule) === "sponsor";
  metrics.deliveries.inc({ kind: "approval", outcome: answer ? "success" : "failed" });
  try {
    await db.insert(webhookDeliveries).values({
      id: newId("event"),
      ...ctx,
      messageId: payload.id,
      subscriptionId: null,
      triggerId: null,
      target: rule.id,
      requestId: currentRequestId(),
      topic: APPROVAL_TOPIC,
      url: rule.url ?? "",
      objectId: rule.id,
      attempt: 1,
      reason: "scheduled",
      status: answer ? "success" : "failed",
      responseStatus,
      responseBody,
      // What the failure meant, for whoever reads the log.
      error: error && `${error}; ${approved ? "sponsored" : "declined"} (onError: ${onErrorOf(rule)})`,
      durationMs,
    });
  } catch (err) {
    log.warn({ err, rule: rule.id }, "could not log an approval webhook call");
  }
  return { approved, ...(answer?.reason && { reason: answer.reason }), ...(error && { error }), durationMs };
}

/** The 402 of a rule that said no, or could not be asked with onError decline. */
function approvalDeclined(policy: PolicyRow, rule: PolicyRuleRow, outcome: ApprovalOutcome): SponsorshipDeclined {
  const who = `Approval webhook rule ${rule.id} of policy ${policy.id}`;
  const message = outcome.error
    ? `${who} could not be asked (${outcome.error}), and its onError is decline.`
    : `${who} declined to sponsor this operation${outcome.reason ? `: ${outcome.reason}` : " (no reason given)"}.`;
  return declined("webhook_declined", message, { policy: policy.id, rule: rule.id, reason: outcome.reason, error: outcome.error });
}

/**
 * Asks every approval_webhook rule of the policy, in the order given (the rules' order), one after the other: the
 * first that says no (or cannot be asked, with onError decline) throws a 402 `webhook_declined` naming it, and no
 * later rule is asked. Answers each rule's outcome when all approve. Call it OUTSIDE any transaction, before the one
 * that holds the operation's cost: it waits up to each rule's timeout on a remote server.
 */
export async function approveSponsorship(
  db: Queryable,
  ctx: ProjectContext,
  policy: PolicyRow,
  rules: PolicyRuleRow[],
  request: ApprovalRequest,
): Promise<(ApprovalOutcome & { rule: string })[]> {
  const outcomes: (ApprovalOutcome & { rule: string })[] = [];
  for (const rule of rules) {
    if (rule.type !== "approval_webhook" || rule.policyId !== policy.id) continue;
    const outcome = await askApproval(db, ctx, rule, approvalPayload(ctx, policy, rule, request));
    if (!outcome.approved) throw approvalDeclined(policy, rule, outcome);
    outcomes.push({ rule: rule.id, ...outcome });
  }
  return outcomes;
}
