import { z } from "zod";
import { booleanField, chainIdField, documentedAs, expandField, integerField, listInput, textField } from "@/lib/http/fields";
import { idRef } from "@/lib/http/resource";

export const SPONSOR_SCHEMAS = ["pay_for_user", "fixed_rate", "charge_custom_tokens"] as const;
/** The spec's three rule types, then this service's: budgets, time windows, gas-price ceilings and approval webhooks. */
export const RULE_TYPES = ["contract_functions", "account_functions", "rate_limit", "budget", "time_window", "gas_price", "approval_webhook"] as const;
export type RuleType = (typeof RULE_TYPES)[number];
export const RATE_LIMITS = ["gas_per_transaction", "gas_per_interval", "count_per_interval"] as const;
export const TIME_INTERVALS = ["minute", "hour", "day", "week", "month"] as const;
/** The functionName of a contract_functions rule that allows every function of its contract(s). */
export const ALL_FUNCTIONS = "All functions";
export const BUDGET_CURRENCIES = ["native", "usd"] as const;
export const BUDGET_SCOPES = ["policy", "player", "account", "operation"] as const;
/** UTC calendar periods (weeks start on Monday), or the budget's whole life. */
export const BUDGET_PERIODS = ["day", "week", "month", "total"] as const;
export const ON_ERROR = ["sponsor", "decline"] as const;
/** Decimals a USD budget may have: micro-dollars, the ledger's USD unit. */
export const USD_DECIMALS = 6;
/** A gas_price rule's longest wait for fees to fall under its ceiling, and the default (no wait). */
export const GAS_PRICE_WAIT = { max: 60, default: 0 } as const;
/** How long an approval webhook may take to answer (milliseconds). */
export const APPROVAL_TIMEOUT = { min: 100, max: 10_000, default: 2_000 } as const;
export const APPROVAL_ON_ERROR_DEFAULT = "decline" as const;
/** The last second a timestamp of a rule may name (9999-12-31T23:59:59Z). */
const MAX_UNIX_SECONDS = 253_402_300_799;

/** A schema with its description in the OpenAPI document, keeping the JSON type shown for a form-friendly field. */
function about<T extends z.ZodType>(schema: T, description: string): T {
  const described = schema.describe(description) as T;
  const shown = documentedAs.get(schema);
  if (shown) documentedAs.set(described, { ...shown, description });
  return described;
}

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

/**
 * A budget's limit: wei as an integer string for native budgets, dollars as a decimal string (up to 6 decimals) for
 * usd ones; which of the two the currency takes is checked with the rule (lib/policies/rules).
 */
const budgetAmountField = () => {
  const schema = z.preprocess(
    (v) => (typeof v === "number" && Number.isFinite(v) && (Number.isSafeInteger(v) || !Number.isInteger(v)) ? String(v) : v),
    z.string().max(100).regex(/^\d{1,78}(\.\d+)?$/, "Expected a positive amount as a decimal string: wei for currency native (\"1000000000000000\"), dollars for currency usd (\"2.50\")"),
  );
  documentedAs.set(schema, {
    type: "string",
    pattern: "^\\d+(\\.\\d{1,6})?$",
    description: "budget: the limit, wei as an integer string for currency native, dollars for currency usd (\"2.50\", up to 6 decimals).",
  });
  return schema;
};

/** Unix seconds; "" or null unsets it on update (the window then has no start, or no end). */
const instantField = (description: string) => {
  const schema = z.preprocess((v) => (v === "" ? null : v), integerField({ min: 0, max: MAX_UNIX_SECONDS }).nullable());
  documentedAs.set(schema, { type: ["integer", "null"], minimum: 0, maximum: MAX_UNIX_SECONDS, description });
  return schema;
};

/** Every field a rule may have; which ones each type takes is checked with the rule (lib/policies/rules). */
const ruleFields = {
  functionName: z.string().min(1).max(200).optional(),
  contract: conId.optional(),
  wildcard: booleanField().optional(),
  gasLimit: amountField().optional(),
  countLimit: integerField({ min: 1 }).optional(),
  timeIntervalType: z.enum(TIME_INTERVALS).optional(),
  timeIntervalValue: integerField({ min: 1, max: 1000 }).optional(),
  amount: budgetAmountField().optional(),
  currency: z.enum(BUDGET_CURRENCIES).describe("budget: native (wei of the policy's chain) or usd (at each chain's price when spent).").optional(),
  scope: z
    .enum(BUDGET_SCOPES)
    .describe("budget: whose spending it caps: the whole policy, each player (across all its accounts, and for usd all chains), each account, or each operation.")
    .optional(),
  period: z.enum(BUDGET_PERIODS).describe("budget: when it starts again: each UTC day, week (from Monday) or month, or never (total). Not for scope operation.").optional(),
  startsAt: instantField("time_window: sponsorship starts at this instant (Unix seconds). \"\" or null on update: no start.").optional(),
  endsAt: instantField("time_window: sponsorship ends at this instant (Unix seconds), after startsAt. \"\" or null on update: no end.").optional(),
  maxFeePerGas: about(amountField(), "gas_price: the highest maxFeePerGas sponsored, in wei.").optional(),
  waitSeconds: about(
    integerField({ min: 0, max: GAS_PRICE_WAIT.max }),
    `gas_price: how long an intent this service builds may wait for fees to fall under the ceiling before it is declined (default ${GAS_PRICE_WAIT.default}).`,
  ).optional(),
  url: z.string().min(1).max(2000).describe("approval_webhook: where to ask, an http(s) URL under the outbound rule (https and public in live mode).").optional(),
  timeoutMs: about(
    integerField({ min: APPROVAL_TIMEOUT.min, max: APPROVAL_TIMEOUT.max }),
    `approval_webhook: how long to wait for the answer, in milliseconds (default ${APPROVAL_TIMEOUT.default}).`,
  ).optional(),
  onError: z.enum(ON_ERROR).describe(`approval_webhook: what an error, a timeout or an unreadable answer means (default ${APPROVAL_ON_ERROR_DEFAULT}).`).optional(),
  expand: expandField(["contract"] as const),
};

export const createPolicyRuleInput = z.strictObject({
  type: z.enum(RULE_TYPES),
  policy: z.string({ error: "policy is required: the policy (pol_...) the rule belongs to" }).startsWith("pol_", "Expected a policy id (pol_...)"),
  ...ruleFields,
});

export const updatePolicyRuleInput = z.strictObject({
  type: z.enum(RULE_TYPES).optional(),
  ...ruleFields,
  rotateSecret: about(booleanField(), "approval_webhook: true makes a new signing secret, answered once as secret; the old one stops at once.").optional(),
});

/** What a rule may expand when read: its contract, and a budget's usage (its use in the current period). */
export const POLICY_RULE_EXPAND = ["contract", "usage"] as const;
export const getPolicyRuleInput = z.strictObject({
  expand: expandField(POLICY_RULE_EXPAND),
  player: z
    .string()
    .startsWith("pla_", "Expected a player id (pla_...)")
    .describe("With expand=usage on a per-player budget: whose use to show.")
    .optional(),
  account: z
    .string()
    .regex(/^(acc|dac)_/, "Expected an account id (acc_... or dac_...)")
    .describe("With expand=usage on a per-account budget: whose use to show.")
    .optional(),
});

export const listPolicyRulesInput = z.strictObject({
  ...listInput,
  policy: z.string({ error: "policy is required: the policy (pol_...) whose rules to list" }).startsWith("pol_", "Expected a policy id (pol_...)"),
  expand: expandField(POLICY_RULE_EXPAND),
});

/** A rule as the API shows it: only the fields its type uses. */
export const policyRuleResponse = z.object({
  id: z.string(),
  object: z.literal("policyRule"),
  createdAt: z.number().int(),
  type: z.enum(RULE_TYPES),
  contract: idRef.loose().optional(),
  functionName: z.string().optional(),
  wildcard: z.boolean().optional(),
  gasLimit: z.string().optional(),
  countLimit: z.number().int().optional(),
  timeIntervalType: z.enum(TIME_INTERVALS).optional(),
  timeIntervalValue: z.number().int().optional(),
  amount: z.string().optional(),
  currency: z.enum(BUDGET_CURRENCIES).optional(),
  scope: z.enum(BUDGET_SCOPES).optional(),
  period: z.enum(BUDGET_PERIODS).optional(),
  startsAt: z.number().int().optional(),
  endsAt: z.number().int().optional(),
  maxFeePerGas: z.string().optional(),
  waitSeconds: z.number().int().optional(),
  url: z.string().optional(),
  timeoutMs: z.number().int().optional(),
  onError: z.enum(ON_ERROR).optional(),
  /**
   * approval_webhook: the Standard Webhooks signing secret (whsec_…) the webhook's requests are signed with, only in
   * the answer that made it (the create, an update with rotateSecret, or one making the rule an approval_webhook).
   */
  secret: z
    .string()
    .describe("approval_webhook: the Standard Webhooks signing secret (whsec_...), only in the answer that made it: the create, or an update with rotateSecret.")
    .optional(),
  /** budget, with expand=usage: its use in the current period (lib/sponsorship/budgets.ts budgetUsage). */
  usage: z
    .object({
      used: z.string().nullable(),
      remaining: z.string().nullable(),
      periodStart: z.number().int().nullable(),
      resetsAt: z.number().int().nullable(),
      subject: z.string().nullable(),
    })
    .describe(
      "budget, with expand=usage: used and remaining in the current UTC period (wei, or dollars with 6 decimals), its start and reset (Unix seconds, the chain's clock; null for total) and whose use (the policy, or the player or account named; null with used and remaining null when the budget is per player or account and none was named).",
    )
    .optional(),
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
export type GetPolicyRuleInput = z.output<typeof getPolicyRuleInput>;
export type ListPolicyRulesInput = z.output<typeof listPolicyRulesInput>;
