// The policy endpoints that plan or record an intent (the dry run, withdrawals) and the reports beside them: above
// lib/intents, which itself uses lib/policies' rules, evaluation and tokens.
import { z } from "zod";
import { integerField, listInput } from "@/lib/http/fields";
import { listEnvelope } from "@/lib/http/list";
import { defineOperation } from "@/lib/http/operation";
import { listResponse } from "@/lib/http/resource";
import { relayIntent } from "@/lib/intents/dispatch";
import { presentIntent } from "@/lib/intents/present";
import { intentResponse } from "@/lib/intents/schema";
import { policyIntentGas, policyReports, policyTokenReport } from "@/lib/policies/reports";
import { evaluatePolicy as dryRun, evaluatePolicyInput, evaluationResponse } from "./dry-run";
import { withdrawTokens } from "./withdraw";

const tag = "Policies";

const intentGas = z.object({ id: z.string(), gasFee: z.string(), gasPrice: z.string(), gasUsed: z.string(), gasFeeInUSD: z.string().nullable() });

const policyReport = z.object({
  period: z.object({ start: z.number().int(), end: z.number().int() }),
  averageTransactionFee: z.string(),
  totalTransactionFee: z.string(),
  totalTransactionFeeInUSD: z.string().nullable(),
  totalTransactionFeeInCustomTokens: z.string(),
  transactionIntents: z.array(intentGas),
});

export const evaluatePolicy = defineOperation({
  operationId: "evaluatePolicy",
  method: "POST",
  path: "/v1/policies/{id}/evaluate",
  summary: "Dry run: whether the policy would sponsor an intent, with every check and its reason (nothing is signed, held or recorded)",
  tag,
  input: evaluatePolicyInput,
  response: evaluationResponse,
  run: async ({ db, project, params, input }) => dryRun(db, project, params.id, input),
});

export const getPolicyReports = defineOperation({
  operationId: "getPolicyTotalGasUsage",
  method: "GET",
  path: "/v1/policies/{id}/reports",
  summary: "Gas sponsored under a policy per UTC day, newest first: fees in wei, USD (at the chain's configured price) and custom tokens",
  tag,
  input: z.strictObject(listInput),
  response: listResponse(policyReport),
  run: async ({ db, project, params, input, path }) => {
    const { rows, total } = await policyReports(db, project, params.id, input);
    return listEnvelope(path, input, rows, total);
  },
});

export const getPolicyIntentReports = defineOperation({
  operationId: "getPolicyReportTransactionIntents",
  method: "GET",
  path: "/v1/policies/{id}/reports/transaction_intents",
  summary: "The gas of each landed intent under a policy, created between from and to (Unix seconds)",
  tag,
  input: z.strictObject({ ...listInput, from: integerField({ min: 0 }).optional(), to: integerField({ min: 0 }).optional() }),
  response: listResponse(intentGas),
  run: async ({ db, project, params, input, path }) => {
    const { rows, total } = await policyIntentGas(db, project, params.id, input);
    return listEnvelope(path, input, rows, total);
  },
});

export const getPolicyWithdrawable = defineOperation({
  operationId: "getPolicyBalance",
  method: "GET",
  path: "/v1/policies/{id}/withdraw",
  summary: "Tokens a fixed_rate or charge_custom_tokens policy collected, withdrew and has left to withdraw",
  tag,
  input: z.strictObject({}),
  response: listResponse(policyReport.extend({ withdrawnInCustomTokens: z.string(), availableInCustomTokens: z.string() })),
  run: async ({ db, project, params, path }) => listEnvelope(path, {}, [await policyTokenReport(db, project, params.id)], 1),
});

export const withdrawFromPolicy = defineOperation({
  operationId: "withdrawFromPolicy",
  cost: "chain",
  method: "POST",
  path: "/v1/policies/{id}/withdraw",
  summary: "Send tokens the policy collected to a developer account (a sponsored intent of the collecting developer account)",
  tag,
  input: z.strictObject({
    account: z.string({ error: "account is required: the developer account (dac_...) to receive the tokens" }).startsWith("dac_", "Expected a developer account id (dac_...)"),
    amount: z.preprocess(
      (v) => (typeof v === "number" && Number.isSafeInteger(v) && v >= 0 ? String(v) : v),
      z.string({ error: "amount is required: token base units, as a decimal string" }).regex(/^\d{1,78}$/, "Expected a token amount in base units, as a decimal string"),
    ),
  }),
  response: intentResponse,
  run: async ({ db, project, params, input }) => presentIntent(db, project, await relayIntent(db, await withdrawTokens(db, project, params.id, input), false), undefined),
});

export const policyReportOperations = [getPolicyReports, getPolicyIntentReports, getPolicyWithdrawable, withdrawFromPolicy];
