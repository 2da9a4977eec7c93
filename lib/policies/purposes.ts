import { formatEther, formatGwei } from "viem";

/**
 * The things a policy rule can be for, in words, and how each maps onto the API's rule types (the spec's
 * three rate limits are one type; see docs/policies.md's table). Pure data and formatting: the dashboard's client
 * components use it.
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
  {
    id: "budget",
    type: "budget",
    label: "Cap what sponsorship may spend (a budget)",
    explanation:
      "Refuses to sponsor once the policy, a player (across all of its accounts), an account, or a single operation would spend more than this amount, in the native coin or in US dollars, per UTC day, week or month, or in total. What an operation may cost is held against the budget before it is signed, so operations at the same time cannot overspend it.",
  },
  {
    id: "time_window",
    type: "time_window",
    label: "Sponsor only between two dates",
    explanation: "Refuses to sponsor before the start or after the end (either may be left open), for a launch, an event or a trial.",
  },
  {
    id: "gas_price",
    type: "gas_price",
    label: "Decline when gas is too expensive",
    explanation:
      "Refuses to sponsor an operation whose fee per gas is above this ceiling. Transactions this service builds can wait a few seconds for fees to fall under it first.",
  },
  {
    id: "approval_webhook",
    type: "approval_webhook",
    label: "Ask your server before sponsoring",
    explanation:
      "Before sponsoring, this service POSTs the operation (policy, player, account, chain, calls, most it may cost) to your URL, signed with Standard Webhooks headers and this rule's secret; your answer {\"sponsor\": true} or {\"sponsor\": false, \"reason\": \"…\"} decides. You choose what an error or a slow answer means.",
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
  amount?: string | null;
  currency?: string | null;
  scope?: string | null;
  period?: string | null;
  /** Unix seconds, as the API shows them. */
  startsAt?: number | null;
  endsAt?: number | null;
  maxFeePerGas?: string | null;
  waitSeconds?: number | null;
  url?: string | null;
  timeoutMs?: number | null;
  onError?: string | null;
}

export function purposeOf(rule: RuleLike): RulePurposeId {
  if (rule.type === "rate_limit") return (rule.functionName as RulePurposeId) ?? "gas_per_transaction";
  return rule.type as RulePurposeId;
}

/** Dollars as written, with cents where there is a fraction: "2.5" is $2.50, "500" is $500, "0.000001" stays. */
export function dollars(amount: string): string {
  const [whole, fraction] = amount.split(".");
  return fraction === undefined ? `$${whole}` : `$${whole}.${fraction.padEnd(2, "0")}`;
}

/** A budget's amount in words: dollars, or the native coin (its wei converted). */
export const budgetAmount = (rule: Pick<RuleLike, "amount" | "currency">, symbol = "ETH") =>
  rule.currency === "usd" ? dollars(rule.amount ?? "0") : `${formatEther(BigInt(rule.amount ?? "0"))} ${symbol}`;

const BUDGET_PERIOD_WORDS: Record<string, string> = {
  day: "per day (UTC)",
  week: "per week (UTC, from Monday)",
  month: "per calendar month (UTC)",
  total: "in total",
};

/** An instant as the dashboard shows a rule's: UTC, to the minute (the same on the server and in the browser). */
export const utcMinute = (seconds: number) => `${new Date(seconds * 1000).toISOString().slice(0, 16).replace("T", " ")} UTC`;

const seconds = (n: number) => `${n} second${n === 1 ? "" : "s"}`;

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
    case "budget": {
      const amount = budgetAmount(rule, symbol);
      const per = BUDGET_PERIOD_WORDS[rule.period ?? ""] ?? "";
      switch (rule.scope) {
        case "operation":
          return `Each operation may cost at most ${amount}.`;
        case "player":
          return `Each player gets at most ${amount} of sponsorship ${per}, across all of its accounts${rule.currency === "usd" ? " and chains" : ""}.`;
        case "account":
          return `Each account gets at most ${amount} of sponsorship ${per}.`;
        default:
          return `This policy spends at most ${amount} on sponsorship ${per}.`;
      }
    }
    case "time_window": {
      const from = rule.startsAt != null ? utcMinute(rule.startsAt) : null;
      const until = rule.endsAt != null ? utcMinute(rule.endsAt) : null;
      if (from && until) return `Sponsors only from ${from} until ${until}.`;
      return from ? `Sponsors only from ${from} on.` : `Sponsors only until ${until}.`;
    }
    case "gas_price": {
      const ceiling = `Declines when the fee per gas is above ${formatGwei(BigInt(rule.maxFeePerGas ?? "0"))} gwei.`;
      return rule.waitSeconds ? `${ceiling} Transactions this service builds wait up to ${seconds(rule.waitSeconds)} for it to fall.` : ceiling;
    }
    case "approval_webhook": {
      const wait = rule.timeoutMs != null ? (rule.timeoutMs % 1000 === 0 ? seconds(rule.timeoutMs / 1000) : `${rule.timeoutMs} ms`) : "a while";
      return `Asks ${rule.url ?? "your server"} before sponsoring; if it fails or does not answer within ${wait}, ${rule.onError === "sponsor" ? "sponsors anyway" : "declines"}.`;
    }
  }
}

export const SPONSOR_SCHEMA_WORDS = {
  pay_for_user: "Pays the gas: players pay nothing.",
  fixed_rate: "Pays the gas and charges the player a fixed amount of your ERC-20 token per transaction.",
  charge_custom_tokens: "Pays the gas and charges the player its cost in your ERC-20 token, at your rate (token units per whole native coin).",
} as const;
