import { formatEther } from "viem";

/**
 * The five things a policy rule can be for, in words, and how each maps onto the API's three rule
 * types (see the README's table). Pure data and formatting: the dashboard's client components use it.
 */
export const RULE_PURPOSES = [
  {
    id: "contract_functions",
    type: "contract_functions",
    label: "Sponsor calls to a contract",
    explanation: "Sponsors calls to one registered contract (one function, or all of them), or to every contract with the wildcard. An intent is sponsored only if every one of its calls is allowed by such a rule.",
  },
  {
    id: "account_functions",
    type: "account_functions",
    label: "Sponsor calls to the player's own account",
    explanation: "Sponsors calls an account makes to itself: transferring ownership, registering session keys, guardians and recovery.",
  },
  {
    id: "gas_per_transaction",
    type: "rate_limit",
    label: "Limit the gas of each transaction",
    explanation: "Refuses to sponsor a transaction whose gas could cost more than this amount.",
  },
  {
    id: "gas_per_interval",
    type: "rate_limit",
    label: "Limit the gas sponsored per player in a period",
    explanation: "Refuses to sponsor once a player's transactions under this policy have cost this much within the rolling period.",
  },
  {
    id: "count_per_interval",
    type: "rate_limit",
    label: "Limit the number of sponsored transactions per player in a period",
    explanation: "Refuses to sponsor once a player has had this many transactions sponsored under this policy within the rolling period.",
  },
] as const;

export type RulePurposeId = (typeof RULE_PURPOSES)[number]["id"];

export interface RuleLike {
  type: string;
  contract?: { id: string; name?: string | null } | null;
  functionName?: string | null;
  wildcard?: boolean | null;
  gasLimit?: string | null;
  countLimit?: number | null;
  timeIntervalType?: string | null;
  timeIntervalValue?: number | null;
}

export function purposeOf(rule: RuleLike): RulePurposeId {
  if (rule.type === "rate_limit") return (rule.functionName as RulePurposeId) ?? "gas_per_transaction";
  return rule.type as RulePurposeId;
}

const period = (rule: RuleLike) => (rule.timeIntervalValue === 1 ? `${rule.timeIntervalType}` : `${rule.timeIntervalValue} ${rule.timeIntervalType}s`);

/** One sentence saying what the rule does. */
export function describeRule(rule: RuleLike, symbol = "ETH"): string {
  switch (purposeOf(rule)) {
    case "contract_functions": {
      const fn = !rule.functionName || rule.functionName === "All functions" ? "any function" : `${rule.functionName}()`;
      if (rule.wildcard) return `Sponsors calls to ${fn} of any contract.`;
      return `Sponsors calls to ${fn} of ${rule.contract?.name ?? rule.contract?.id ?? "a contract"}.`;
    }
    case "account_functions":
      return "Sponsors calls an account makes to itself (ownership, session keys, guardians, recovery).";
    case "gas_per_transaction":
      return `Each transaction may cost at most ${formatEther(BigInt(rule.gasLimit ?? "0"))} ${symbol} in gas.`;
    case "gas_per_interval":
      return `Each player gets at most ${formatEther(BigInt(rule.gasLimit ?? "0"))} ${symbol} of sponsored gas per ${period(rule)}.`;
    case "count_per_interval":
      return `Each player gets at most ${rule.countLimit} sponsored transaction${rule.countLimit === 1 ? "" : "s"} per ${period(rule)}.`;
  }
}

export const SPONSOR_SCHEMA_WORDS = {
  pay_for_user: "Pays the gas: players pay nothing.",
  fixed_rate: "Pays the gas and charges the player a fixed amount of your ERC-20 token per transaction.",
  charge_custom_tokens: "Pays the gas and charges the player its cost in your ERC-20 token, at your rate (token units per whole native coin).",
} as const;
