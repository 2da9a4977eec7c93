import { and, asc, eq, inArray, sql } from "drizzle-orm";
import type { AbiFunction } from "abitype";
import { chainFor } from "@/lib/chain/registry";
import { activeContractOn } from "@/lib/contracts/service";
import type { Queryable } from "@/lib/db/client";
import { policies, policyRules } from "@/lib/db/schema";
import { preparedQuery } from "@/lib/db/prepared-query";
import { inScope } from "@/lib/db/scope";
import { newSigningSecret, openSigningSecret, sealSigningSecret } from "@/lib/deliveries/signing";
import { ApiError, badRequest, notFound, referenced, type ErrorDetails } from "@/lib/errors";
import { listPage } from "@/lib/http/list";
import { unixSeconds } from "@/lib/http/resource";
import { newId } from "@/lib/ids";
import { checkOutboundUrl } from "@/lib/outbound";
import type { ProjectContext } from "@/lib/tenant";
import { usdPriceStatus } from "@/lib/sponsorship/prices";
import {
  ALL_FUNCTIONS,
  APPROVAL_ON_ERROR_DEFAULT,
  APPROVAL_TIMEOUT,
  GAS_PRICE_WAIT,
  RATE_LIMITS,
  USD_DECIMALS,
  type CreatePolicyRuleInput,
  type ListPolicyRulesInput,
  type RuleType,
  type UpdatePolicyRuleInput,
} from "./schema";
import { getPolicy, type PolicyRow } from "./service";

export type PolicyRuleRow = typeof policyRules.$inferSelect;
/** A rule just made (or whose signing secret was just made): `secret` is that secret, answered this once. */
export type PolicyRuleWithSecret = PolicyRuleRow & { secret?: string };
/** A rule's fields as sent; null (a time window's start or end on update) unsets. */
type SentFields = Omit<CreatePolicyRuleInput, "policy" | "expand">;
/** A rule's fields, as checked and stored: no nulls. */
type RuleFields = { [K in keyof SentFields]: Exclude<SentFields[K], null> };
type Field = Exclude<keyof RuleFields, "type">;

const SPEC_FIELDS: Field[] = ["contract", "functionName", "wildcard", "gasLimit", "countLimit", "timeIntervalType", "timeIntervalValue"];
/** The fields of the types beyond the spec's: each takes its own and no other. */
const FIELDS_OF = {
  budget: ["amount", "currency", "scope", "period"],
  time_window: ["startsAt", "endsAt"],
  gas_price: ["maxFeePerGas", "waitSeconds"],
  approval_webhook: ["url", "timeoutMs", "onError"],
} as const satisfies Record<string, Field[]>;
const NEW_FIELDS: Field[] = Object.values(FIELDS_OF).flat();
const allBut = (own: readonly Field[]) => [...SPEC_FIELDS, ...NEW_FIELDS].filter((field) => !own.includes(field));

const NOT_FOR: Record<RuleType, Field[]> = {
  contract_functions: ["gasLimit", "countLimit", "timeIntervalType", "timeIntervalValue", ...NEW_FIELDS],
  account_functions: ["contract", "functionName", "wildcard", "gasLimit", "countLimit", "timeIntervalType", "timeIntervalValue", ...NEW_FIELDS],
  rate_limit: ["contract", "wildcard", ...NEW_FIELDS],
  budget: allBut(FIELDS_OF.budget),
  time_window: allBut(FIELDS_OF.time_window),
  gas_price: allBut(FIELDS_OF.gas_price),
  approval_webhook: allBut(FIELDS_OF.approval_webhook),
};

const RATE_LIMIT_NEEDS: Record<(typeof RATE_LIMITS)[number], (keyof RuleFields)[]> = {
  gas_per_transaction: ["gasLimit"],
  gas_per_interval: ["gasLimit", "timeIntervalType", "timeIntervalValue"],
  count_per_interval: ["countLimit", "timeIntervalType", "timeIntervalValue"],
};

/** The fields sent, without those that are null (unset) or not sent. */
const present = <T extends object>(fields: T) => Object.fromEntries(Object.entries(fields).filter(([, v]) => v !== undefined && v !== null)) as { [K in keyof T]: Exclude<T[K], null> };

/** A budget's amount, checked for its currency: an integer of wei, or dollars with at most USD_DECIMALS decimals; more than 0. Answers it canonical. */
function checkAmount(amount: string, currency: "native" | "usd", details: ErrorDetails): string | undefined {
  const [whole = "", fraction] = amount.split(".");
  if (currency === "native" && fraction !== undefined) {
    details.amount = { value: amount, message: "a native budget is an integer amount of wei (for dollars, use currency usd)" };
  } else if (fraction !== undefined && fraction.length > USD_DECIMALS) {
    details.amount = { value: amount, message: `dollars with at most ${USD_DECIMALS} decimals` };
  } else if (BigInt(whole) === 0n && !/[1-9]/.test(fraction ?? "")) {
    details.amount = { value: amount, message: "must be more than 0" };
  } else {
    return `${BigInt(whole)}${fraction !== undefined ? `.${fraction}` : ""}`;
  }
}

/** Why a usd budget cannot be counted on the chain (it has no USD price), or null when it can. Read outside any transaction. */
async function usdPriceProblem(ctx: ProjectContext, chainId: number): Promise<string | null> {
  const status = await usdPriceStatus(chainFor(ctx, chainId));
  return status.price !== null && status.price > 0 ? null : (status.reason ?? `Chain ${chainId} has no USD price.`);
}

/**
 * A rule's fields must make sense together: which fields each type (and rate-limit kind) takes
 * is the whole of a rule's meaning, so anything else is refused rather than ignored. Answers the
 * rule as stored (amounts canonical, the webhook's URL normalised). `details` may hold refusals
 * of the caller's own, reported with these.
 */
async function checkRule(db: Queryable, ctx: ProjectContext, chainId: number, rule: RuleFields, details: ErrorDetails = {}): Promise<RuleFields> {
  const checked: RuleFields = { ...rule };
  for (const field of NOT_FOR[rule.type]) {
    if (rule[field] !== undefined && !(field === "wildcard" && rule[field] === false)) {
      details[field] = { value: rule[field], message: `not used by ${rule.type} rules` };
    }
  }
  if (rule.type === "rate_limit") {
    const kind = rule.functionName as (typeof RATE_LIMITS)[number];
    if (!RATE_LIMITS.includes(kind)) {
      details.functionName = { value: rule.functionName, message: `a rate_limit rule's functionName is one of ${RATE_LIMITS.join(", ")}` };
    } else {
      for (const field of RATE_LIMIT_NEEDS[kind]) if (rule[field] === undefined) details[field] = { message: `required by ${kind}` };
      for (const field of ["gasLimit", "countLimit", "timeIntervalType", "timeIntervalValue"] as const) {
        if (!RATE_LIMIT_NEEDS[kind].includes(field) && rule[field] !== undefined) details[field] = { value: rule[field], message: `not used by ${kind}` };
      }
    }
  }
  if (rule.type === "contract_functions") {
    if (!rule.wildcard && rule.contract === undefined) details.contract = { message: "required unless wildcard is true (which allows every contract)" };
    if (rule.wildcard && rule.contract !== undefined) details.contract = { value: rule.contract, message: "a wildcard rule applies to every contract; omit contract" };
    if (!rule.wildcard && rule.functionName === undefined) details.functionName = { message: `required: a function of the contract, or "${ALL_FUNCTIONS}"` };
  }
  if (rule.type === "budget") {
    if (rule.amount === undefined) details.amount = { message: "required: the budget's limit, wei for currency native or dollars for currency usd" };
    if (rule.currency === undefined) details.currency = { message: "required: native (wei) or usd (dollars)" };
    if (rule.scope === undefined) details.scope = { message: "required: policy, player, account or operation" };
    if (rule.scope === "operation" && rule.period !== undefined) {
      details.period = { value: rule.period, message: "an operation budget caps each operation alone: it has no period" };
    } else if (rule.scope !== "operation" && rule.period === undefined) {
      details.period = { message: `required${rule.scope ? ` by a ${rule.scope} budget` : ""}: day, week, month (UTC) or total` };
    }
    if (rule.amount !== undefined && rule.currency !== undefined) checked.amount = checkAmount(rule.amount, rule.currency, details);
  }
  if (rule.type === "time_window") {
    if (rule.startsAt === undefined && rule.endsAt === undefined) {
      details.startsAt = { message: "startsAt, endsAt or both are required" };
      details.endsAt = { message: "startsAt, endsAt or both are required" };
    } else if (rule.startsAt !== undefined && rule.endsAt !== undefined && rule.endsAt <= rule.startsAt) {
      details.endsAt = { value: rule.endsAt, message: `must be after startsAt (${rule.startsAt})` };
    }
  }
  if (rule.type === "gas_price") {
    if (rule.maxFeePerGas === undefined) details.maxFeePerGas = { message: "required: the highest maxFeePerGas sponsored, in wei" };
    else if (BigInt(rule.maxFeePerGas) === 0n) details.maxFeePerGas = { value: rule.maxFeePerGas, message: "must be more than 0 (a ceiling of 0 sponsors nothing)" };
    else checked.maxFeePerGas = BigInt(rule.maxFeePerGas).toString();
  }
  if (rule.type === "approval_webhook") {
    if (rule.url === undefined) details.url = { message: "required: the URL this service asks before sponsoring" };
    else {
      // The outbound rule, checked as it is saved (no connection is made: hosts are resolved only where they must be public).
      try {
        checked.url = (await checkOutboundUrl(rule.url, { livemode: ctx.livemode, field: "url" })).href;
      } catch (err) {
        if (!(err instanceof ApiError) || !err.details?.url) throw err;
        // Alone, the refusal says it in its own words; with others, it is one of the fields named.
        if (Object.keys(details).length === 0) throw err;
        details.url = err.details.url;
      }
    }
  }
  if (Object.keys(details).length) throw badRequest(`Invalid ${rule.type} rule.`, details);

  if (rule.type === "contract_functions" && rule.contract !== undefined) {
    const contract = await activeContractOn(db, ctx, rule.contract, chainId, "contract");
    const functions = (contract.abi as AbiFunction[]).filter((item) => item.type === "function").map((f) => f.name);
    if (rule.functionName !== ALL_FUNCTIONS && !functions.includes(rule.functionName!)) {
      throw badRequest(`Contract ${contract.id} has no function "${rule.functionName}" in its ABI.`, {
        functionName: { value: rule.functionName, message: `one of: ${[ALL_FUNCTIONS, ...new Set(functions)].slice(0, 30).join(", ")}` },
      });
    }
  }
  if (rule.type === "budget" && rule.currency === "usd") {
    const problem = await usdPriceProblem(ctx, chainId);
    if (problem) {
      throw badRequest(`A usd budget cannot be counted on this policy's chain. ${problem} Until then, budget in wei with currency native.`, {
        currency: { value: "usd", message: `chain ${chainId} has no USD price` },
      });
    }
  }
  return checked;
}

const instant = (seconds: number | undefined) => (seconds === undefined ? null : new Date(seconds * 1000));

/** The columns of a checked rule: the fields its type does not use are null; the optional ones of the new types take their defaults. */
const columns = (rule: RuleFields) => ({
  type: rule.type,
  contractId: rule.contract ?? null,
  functionName: rule.functionName ?? null,
  wildcard: rule.wildcard ?? false,
  gasLimit: rule.gasLimit ?? null,
  countLimit: rule.countLimit ?? null,
  timeIntervalType: rule.timeIntervalType ?? null,
  timeIntervalValue: rule.timeIntervalValue ?? null,
  amount: rule.amount ?? null,
  currency: rule.currency ?? null,
  scope: rule.scope ?? null,
  period: rule.period ?? null,
  startsAt: instant(rule.startsAt),
  endsAt: instant(rule.endsAt),
  maxFeePerGas: rule.maxFeePerGas ?? null,
  waitSeconds: rule.type === "gas_price" ? (rule.waitSeconds ?? GAS_PRICE_WAIT.default) : null,
  url: rule.url ?? null,
  timeoutMs: rule.type === "approval_webhook" ? (rule.timeoutMs ?? APPROVAL_TIMEOUT.default) : null,
  onError: rule.type === "approval_webhook" ? (rule.onError ?? APPROVAL_ON_ERROR_DEFAULT) : null,
});

/** A stored rule's fields, as they would be sent. */
const fieldsOf = (row: PolicyRuleRow): RuleFields =>
  present({
    type: row.type,
    contract: row.contractId,
    functionName: row.functionName,
    wildcard: row.wildcard || undefined,
    gasLimit: row.gasLimit,
    countLimit: row.countLimit,
    timeIntervalType: row.timeIntervalType,
    timeIntervalValue: row.timeIntervalValue,
    amount: row.amount,
    currency: row.currency,
    scope: row.scope,
    period: row.period,
    startsAt: row.startsAt && unixSeconds(row.startsAt),
    endsAt: row.endsAt && unixSeconds(row.endsAt),
    maxFeePerGas: row.maxFeePerGas,
    waitSeconds: row.waitSeconds,
    url: row.url,
    timeoutMs: row.timeoutMs,
    onError: row.onError,
  }) as RuleFields;

/**
 * An approval webhook's signing secret is sealed to its rule (the rule's id is the encryption's associated data), so
 * it cannot be moved to another rule; lib/key-rotation.ts lists the column.
 */
export const sealRuleSecret = (secret: string, ruleId: string) => sealSigningSecret(secret, ruleId);
export const openRuleSecret = (row: Pick<PolicyRuleRow, "id" | "encryptedSecret">) => (row.encryptedSecret ? openSigningSecret(row.encryptedSecret, row.id) : null);

/**
 * Budgets (but per-operation ones) count what our paymaster held on the project's sponsorship ledger: a policy sponsored
 * by a registered paymaster never holds there, so such a budget would never bind. Refused rather than ignored.
 */
function refuseLedgerBudget(policy: { id: string; paymasterId: string | null }, rule: RuleFields) {
  if (rule.type === "budget" && rule.scope !== "operation" && policy.paymasterId) {
    throw badRequest(
      `Policy ${policy.id} is sponsored by registered paymaster ${policy.paymasterId}, whose operations are that service's money, not this service's sponsorship ledger, which budgets count. Only a per-operation budget (scope operation) applies to it.`,
      { scope: { value: rule.scope, message: "only operation, for a policy with a registered paymaster" } },
    );
  }
}

/** A new rule; an approval_webhook's signing secret is made with it and answered this once (`secret`). */
export async function createPolicyRule(db: Queryable, ctx: ProjectContext, input: CreatePolicyRuleInput): Promise<PolicyRuleWithSecret> {
  const policy = await referenced(getPolicy(db, ctx, input.policy), "policy", input.policy);
  if (policy.deleted) throw badRequest(`Policy ${policy.id} is deleted.`, { policy: { value: policy.id, message: "deleted" } });
  const { policy: _policy, expand: _expand, ...sent } = input;
  const rule = await checkRule(db, ctx, policy.chainId, present(sent));
  refuseLedgerBudget(policy, rule);
  const id = newId("policyRule");
  const secret = rule.type === "approval_webhook" ? newSigningSecret() : undefined;
  const [row] = await db
    .insert(policyRules)
    .values({ id, ...ctx, policyId: policy.id, ...columns(rule), encryptedSecret: secret ? sealRuleSecret(secret, id) : null })
    .returning();
  return secret ? { ...row!, secret } : row!;
}

export async function getPolicyRule(db: Queryable, ctx: ProjectContext, id: string): Promise<PolicyRuleRow> {
  const [row] = await db.select().from(policyRules).where(inScope(policyRules, ctx, eq(policyRules.id, id)));
  if (!row) throw notFound("policy rule", id);
  return row;
}

/**
 * Fields not sent keep their values when the type stays (null unsets a time window's start or end); a new type starts
 * from what was sent. An approval_webhook keeps its signing secret unless `rotateSecret` asks for a new one (answered
 * once, as when a rule becomes an approval_webhook); a rule of another type has none.
 */
export async function updatePolicyRule(db: Queryable, ctx: ProjectContext, id: string, input: UpdatePolicyRuleInput): Promise<PolicyRuleWithSecret> {
  const current = await getPolicyRule(db, ctx, id);
  const policy = await getPolicy(db, ctx, current.policyId);
  const { expand: _expand, rotateSecret, ...sent } = input;
  const type = sent.type ?? current.type;
  const kept: Partial<SentFields> = type === current.type ? fieldsOf(current) : {};
  const merged: SentFields = { ...kept, ...Object.fromEntries(Object.entries(sent).filter(([, v]) => v !== undefined)), type };
  if (sent.wildcard === true) delete merged.contract;
  // A budget made per-operation has no period: the one it had goes with its old scope.
  if (sent.scope === "operation" && sent.period === undefined) delete merged.period;
  const refused: ErrorDetails = {};
  if (rotateSecret && type !== "approval_webhook") refused.rotateSecret = { value: rotateSecret, message: `${type} rules have no signing secret (approval_webhook rules do)` };
  const rule = await checkRule(db, ctx, policy.chainId, present(merged), refused);
  refuseLedgerBudget(policy, rule);
  const secret = type === "approval_webhook" && (rotateSecret || current.type !== "approval_webhook" || !current.encryptedSecret) ? newSigningSecret() : undefined;
  const encryptedSecret = secret ? sealRuleSecret(secret, id) : type === "approval_webhook" ? current.encryptedSecret : null;
  const [row] = await db
    .update(policyRules)
    .set({ ...columns(rule), encryptedSecret, updatedAt: new Date() })
    .where(eq(policyRules.id, id))
    .returning();
  return secret ? { ...row!, secret } : row!;
}

export async function deletePolicyRule(db: Queryable, ctx: ProjectContext, id: string) {
  const deleted = await db.delete(policyRules).where(inScope(policyRules, ctx, eq(policyRules.id, id))).returning({ id: policyRules.id });
  if (deleted.length === 0) throw notFound("policy rule", id);
  return { id, object: "policyRule" as const, deleted: true as const };
}

export async function listPolicyRules(db: Queryable, ctx: ProjectContext, input: ListPolicyRulesInput) {
  await referenced(getPolicy(db, ctx, input.policy), "policy", input.policy);
  return listPage(db, policyRules, inScope(policyRules, ctx, eq(policyRules.policyId, input.policy)), input);
}

/** Every rule of the given policies, oldest first (for embedding and evaluation). */
const scopeValues = { projectId: sql.placeholder("projectId"), livemode: sql.placeholder("livemode") };
const policyAndRules = preparedQuery("policy_with_rules", (q) =>
  q
    .select({ policy: policies, rule: policyRules })
    .from(policies)
    .leftJoin(policyRules, and(eq(policyRules.policyId, policies.id), inScope(policyRules, scopeValues)))
    .where(inScope(policies, scopeValues, eq(policies.id, sql.placeholder("id"))))
    .orderBy(asc(policyRules.createdAt), asc(policyRules.id)),
);

/** A policy by id (deleted ones too, as getPolicy) with its rules in rulesOfPolicies' order: one statement, for every intent. */
export async function policyWithRules(db: Queryable, ctx: ProjectContext, id: string): Promise<{ policy: PolicyRow; rules: PolicyRuleRow[] }> {
  const rows = await policyAndRules(db, { projectId: ctx.projectId, livemode: ctx.livemode, id });
  if (rows.length === 0) throw notFound("policy", id);
  return { policy: rows[0]!.policy, rules: rows.flatMap((row) => (row.rule ? [row.rule] : [])) };
}

export async function rulesOfPolicies(db: Queryable, ctx: ProjectContext, policyIds: string[]): Promise<Map<string, PolicyRuleRow[]>> {
  const byPolicy = new Map<string, PolicyRuleRow[]>(policyIds.map((id) => [id, []]));
  if (policyIds.length === 0) return byPolicy;
  const rows = await db.select().from(policyRules).where(inScope(policyRules, ctx, inArray(policyRules.policyId, policyIds))).orderBy(asc(policyRules.createdAt), asc(policyRules.id));
  for (const row of rows) byPolicy.get(row.policyId)?.push(row);
  return byPolicy;
}
