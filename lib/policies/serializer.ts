import { unixSeconds } from "@/lib/http/resource";
import type { PolicyResponse, PolicyRuleResponse } from "./schema";
import type { PolicyRuleRow } from "./rules";
import type { PolicyRow } from "./service";

const present = <T>(value: T | null) => (value === null ? undefined : value);

/** Only the fields the rule's type uses are shown (undefined ones drop out of the JSON); never an approval webhook's secret. */
export function serializePolicyRule(row: PolicyRuleRow, contract: PolicyRuleResponse["contract"] = row.contractId ? { id: row.contractId } : undefined): PolicyRuleResponse {
  const base = { id: row.id, object: "policyRule" as const, createdAt: unixSeconds(row.createdAt), type: row.type };
  switch (row.type) {
    case "contract_functions":
      return { ...base, ...(contract && { contract }), functionName: present(row.functionName), wildcard: row.wildcard };
    case "account_functions":
      return base;
    case "rate_limit":
      return {
        ...base,
        functionName: present(row.functionName),
        gasLimit: present(row.gasLimit),
        countLimit: present(row.countLimit),
        timeIntervalType: present(row.timeIntervalType),
        timeIntervalValue: present(row.timeIntervalValue),
      };
    case "budget":
      return { ...base, amount: present(row.amount), currency: present(row.currency), scope: present(row.scope), period: present(row.period) };
    case "time_window":
      return { ...base, startsAt: row.startsAt ? unixSeconds(row.startsAt) : undefined, endsAt: row.endsAt ? unixSeconds(row.endsAt) : undefined };
    case "gas_price":
      return { ...base, maxFeePerGas: present(row.maxFeePerGas), waitSeconds: present(row.waitSeconds) };
    case "approval_webhook":
      return { ...base, url: present(row.url), timeoutMs: present(row.timeoutMs), onError: present(row.onError) };
  }
}

export function serializePolicy(
  row: PolicyRow,
  policyRules: PolicyResponse["policyRules"] = [],
  transactionIntents: PolicyResponse["transactionIntents"] = [],
): PolicyResponse {
  return {
    id: row.id,
    object: "policy",
    createdAt: unixSeconds(row.createdAt),
    name: row.name,
    chainId: row.chainId,
    strategy: {
      sponsorSchema: row.sponsorSchema,
      ...(row.tokenContractId && { tokenContract: row.tokenContractId }),
      ...(row.tokenContractAmount && { tokenContractAmount: row.tokenContractAmount }),
    },
    ...(row.paymasterId && { paymaster: { id: row.paymasterId } }),
    sponsorOutsideAccounts: row.sponsorOutsideAccounts,
    deleted: row.deleted,
    enabled: row.enabled,
    transactionIntents,
    policyRules,
  };
}
