import { z } from "zod";
import { chainIdField } from "@/lib/chain/registry";
import { booleanField, expandField, integerField, listInput, textField } from "@/lib/http/fields";
import { idRef } from "@/lib/http/resource";

export const SPONSOR_SCHEMAS = ["pay_for_user", "fixed_rate", "charge_custom_tokens"] as const;
export const RULE_TYPES = ["contract_functions", "account_functions", "rate_limit"] as const;
/** Every type a stored rule can have (the columns of lib/db/schema.ts); the API takes RULE_TYPES. */
export const STORED_RULE_TYPES = [...RULE_TYPES, "budget", "time_window", "gas_price", "approval_webhook"] as const;
export const RATE_LIMITS = ["gas_per_transaction", "gas_per_interval", "count_per_interval"] as const;
export const TIME_INTERVALS = ["minute", "hour", "day", "week", "month"] as const;
/** The functionName of a contract_functions rule that allows every function of its contract(s). */
export const ALL_FUNCTIONS = "All functions";

const conId = z.string().startsWith("con_", "Expected a contract id (con_...)");
/** A non-negative integer amount in base units (wei), as a decimal string; numbers are accepted too. */
const amountField = () =>
  z.preprocess(
    (v) => (typeof v === "number" && Number.isSafeInteger(v) ? String(v) : v),
    z.string().regex(/^\d{1,78}$/, "Expected a non-negative integer amount in base units (wei), as a decimal string"),
  );

const strategyInput = z.strictObject({
  sponsorSchema: z.enum(SPONSOR_SCHEMAS),
  tokenContract: conId.optional(),
  tokenContractAmount: amountField().optional(),
});

/** The registered ERC-7677 paymaster (pay_) that sponsors the policy's intents; "" (or null) on update: our own paymaster again. */
const paymasterField = () =>
  z.preprocess((v) => (v === null ? "" : v), z.union([z.literal(""), z.string().startsWith("pay_", "Expected a paymaster id (pay_...)").max(100)])).optional();

const policyExpand = expandField(["transactionIntents", "policyRules"] as const);

export const createPolicyInput = z.strictObject({
  name: textField(255).min(1),
  chainId: chainIdField(),
  strategy: strategyInput,
  paymaster: paymasterField(),
  sponsorOutsideAccounts: booleanField().optional(),
  expand: policyExpand,
});

export const updatePolicyInput = z.strictObject({
  name: textField(255).min(1).optional(),
  chainId: chainIdField().optional(),
  strategy: strategyInput.optional(),
  paymaster: paymasterField(),
  sponsorOutsideAccounts: booleanField().optional(),
  deleted: booleanField().optional(),
  expand: policyExpand,
});

export const listPoliciesInput = z.strictObject({
  ...listInput,
  expand: policyExpand,
  name: z.string().optional(),
  deleted: booleanField().optional(),
  chainId: integerField().optional(),
  enabled: booleanField().optional(),
});

export const getPolicyInput = z.strictObject({ expand: policyExpand });

const ruleFields = {
  functionName: z.string().min(1).max(200).optional(),
  contract: conId.optional(),
  wildcard: booleanField().optional(),
  gasLimit: amountField().optional(),
  countLimit: integerField({ min: 1 }).optional(),
  timeIntervalType: z.enum(TIME_INTERVALS).optional(),
  timeIntervalValue: integerField({ min: 1, max: 1000 }).optional(),
  expand: expandField(["contract"] as const),
};

export const createPolicyRuleInput = z.strictObject({
  type: z.enum(RULE_TYPES),
  policy: z.string({ error: "policy is required: the policy (pol_...) the rule belongs to" }).startsWith("pol_", "Expected a policy id (pol_...)"),
  ...ruleFields,
});

export const updatePolicyRuleInput = z.strictObject({ type: z.enum(RULE_TYPES).optional(), ...ruleFields });

export const listPolicyRulesInput = z.strictObject({
  ...listInput,
  policy: z.string({ error: "policy is required: the policy (pol_...) whose rules to list" }).startsWith("pol_", "Expected a policy id (pol_...)"),
  expand: expandField(["contract"] as const),
});

export const policyRuleResponse = z.object({
  id: z.string(),
  object: z.literal("policyRule"),
  createdAt: z.number().int(),
  type: z.enum(STORED_RULE_TYPES),
  contract: idRef.loose().optional(),
  functionName: z.string().optional(),
  wildcard: z.boolean().optional(),
  gasLimit: z.string().optional(),
  countLimit: z.number().int().optional(),
  timeIntervalType: z.enum(TIME_INTERVALS).optional(),
  timeIntervalValue: z.number().int().optional(),
});

export const policyResponse = z.object({
  id: z.string(),
  object: z.literal("policy"),
  createdAt: z.number().int(),
  name: z.string(),
  chainId: z.number().int(),
  strategy: z.object({
    sponsorSchema: z.enum(SPONSOR_SCHEMAS),
    tokenContract: z.string().optional(),
    tokenContractAmount: z.string().optional(),
  }),
  /** The registered paymaster sponsoring through its ERC-7677 service; absent when our own paymaster does. */
  paymaster: idRef.loose().optional(),
  /**
   * Our ERC-7677 service may sponsor senders the project does not know under this policy. False (the default): only
   * the project's own accounts on the policy's chain (or a first operation deploying one of them).
   */
  sponsorOutsideAccounts: z.boolean(),
  deleted: z.boolean(),
  enabled: z.boolean(),
  transactionIntents: z.array(idRef.loose()),
  policyRules: z.array(idRef.loose()),
});

export type PolicyResponse = z.infer<typeof policyResponse>;
export type PolicyRuleResponse = z.infer<typeof policyRuleResponse>;
export type CreatePolicyInput = z.output<typeof createPolicyInput>;
export type UpdatePolicyInput = z.output<typeof updatePolicyInput>;
export type ListPoliciesInput = z.output<typeof listPoliciesInput>;
export type CreatePolicyRuleInput = z.output<typeof createPolicyRuleInput>;
export type UpdatePolicyRuleInput = z.output<typeof updatePolicyRuleInput>;
export type ListPolicyRulesInput = z.output<typeof listPolicyRulesInput>;
