import { asc, eq, inArray } from "drizzle-orm";
import type { AbiFunction } from "abitype";
import { activeContractOn } from "@/lib/contracts/service";
import type { Queryable } from "@/lib/db/client";
import { policyRules } from "@/lib/db/schema";
import { inScope } from "@/lib/db/scope";
import { badRequest, notFound, referenced, type ErrorDetails } from "@/lib/http/errors";
import { listPage } from "@/lib/http/list";
import { newId } from "@/lib/ids";
import type { ProjectContext } from "@/lib/projects/service";
import { ALL_FUNCTIONS, RATE_LIMITS, type CreatePolicyRuleInput, type ListPolicyRulesInput, type UpdatePolicyRuleInput } from "./schema";
import { getPolicy } from "./service";

export type PolicyRuleRow = typeof policyRules.$inferSelect;
type RuleFields = Omit<CreatePolicyRuleInput, "policy" | "expand" | "type"> & { type: PolicyRuleRow["type"] };
const SPEC_FIELDS: (keyof RuleFields)[] = ["contract", "functionName", "wildcard", "gasLimit", "countLimit", "timeIntervalType", "timeIntervalValue"];

const NOT_FOR: Record<RuleFields["type"], (keyof RuleFields)[]> = {
  contract_functions: ["gasLimit", "countLimit", "timeIntervalType", "timeIntervalValue"],
  account_functions: ["contract", "functionName", "wildcard", "gasLimit", "countLimit", "timeIntervalType", "timeIntervalValue"],
  rate_limit: ["contract", "wildcard"],
  budget: SPEC_FIELDS,
  time_window: SPEC_FIELDS,
  gas_price: SPEC_FIELDS,
  approval_webhook: SPEC_FIELDS,
};

const RATE_LIMIT_NEEDS: Record<(typeof RATE_LIMITS)[number], (keyof RuleFields)[]> = {
  gas_per_transaction: ["gasLimit"],
  gas_per_interval: ["gasLimit", "timeIntervalType", "timeIntervalValue"],
  count_per_interval: ["countLimit", "timeIntervalType", "timeIntervalValue"],
};

/**
 * A rule's fields must make sense together: which fields each type (and rate-limit kind) takes
 * is the whole of a rule's meaning, so anything else is refused rather than ignored.
 */
async function checkRule(db: Queryable, ctx: ProjectContext, chainId: number, rule: RuleFields) {
  const details: ErrorDetails = {};
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
}

const columns = (rule: RuleFields) => ({
  type: rule.type,
  contractId: rule.contract ?? null,
  functionName: rule.functionName ?? null,
  wildcard: rule.wildcard ?? false,
  gasLimit: rule.gasLimit ?? null,
  countLimit: rule.countLimit ?? null,
  timeIntervalType: rule.timeIntervalType ?? null,
  timeIntervalValue: rule.timeIntervalValue ?? null,
});

export async function createPolicyRule(db: Queryable, ctx: ProjectContext, input: CreatePolicyRuleInput): Promise<PolicyRuleRow> {
  const policy = await referenced(getPolicy(db, ctx, input.policy), "policy", input.policy);
  if (policy.deleted) throw badRequest(`Policy ${policy.id} is deleted.`, { policy: { value: policy.id, message: "deleted" } });
  const { policy: _policy, expand: _expand, ...rule } = input;
  await checkRule(db, ctx, policy.chainId, rule);
  const [row] = await db.insert(policyRules).values({ id: newId("policyRule"), ...ctx, policyId: policy.id, ...columns(rule) }).returning();
  return row!;
}

export async function getPolicyRule(db: Queryable, ctx: ProjectContext, id: string): Promise<PolicyRuleRow> {
  const [row] = await db.select().from(policyRules).where(inScope(policyRules, ctx, eq(policyRules.id, id)));
  if (!row) throw notFound("policy rule", id);
  return row;
}

/** Fields not sent keep their values when the type stays; a new type starts from what was sent. */
export async function updatePolicyRule(db: Queryable, ctx: ProjectContext, id: string, input: UpdatePolicyRuleInput): Promise<PolicyRuleRow> {
  const current = await getPolicyRule(db, ctx, id);
  const policy = await getPolicy(db, ctx, current.policyId);
  const { expand: _expand, ...sent } = input;
  const type = sent.type ?? current.type;
  const kept: RuleFields =
    type === current.type
      ? {
          type,
          contract: current.contractId ?? undefined,
          functionName: current.functionName ?? undefined,
          wildcard: current.wildcard || undefined,
          gasLimit: current.gasLimit ?? undefined,
          countLimit: current.countLimit ?? undefined,
          timeIntervalType: current.timeIntervalType ?? undefined,
          timeIntervalValue: current.timeIntervalValue ?? undefined,
        }
      : { type };
  const rule: RuleFields = { ...kept, ...Object.fromEntries(Object.entries(sent).filter(([, v]) => v !== undefined)), type };
  if (sent.wildcard === true) delete rule.contract;
  await checkRule(db, ctx, policy.chainId, rule);
  const [row] = await db
    .update(policyRules)
    .set({ ...columns(rule), updatedAt: new Date() })
    .where(eq(policyRules.id, id))
    .returning();
  return row!;
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
export async function rulesOfPolicies(db: Queryable, ctx: ProjectContext, policyIds: string[]): Promise<Map<string, PolicyRuleRow[]>> {
  const byPolicy = new Map<string, PolicyRuleRow[]>(policyIds.map((id) => [id, []]));
  if (policyIds.length === 0) return byPolicy;
  const rows = await db.select().from(policyRules).where(inScope(policyRules, ctx, inArray(policyRules.policyId, policyIds))).orderBy(asc(policyRules.createdAt), asc(policyRules.id));
  for (const row of rows) byPolicy.get(row.policyId)?.push(row);
  return byPolicy;
}
