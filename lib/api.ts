import { accountOperations } from "@/lib/accounts/operations";
import { bundlerOperations } from "@/lib/bundler/operation";
import { contractOperations } from "@/lib/contracts/operations";
import { developerAccountOperations } from "@/lib/developer-accounts/operations";
import { eventOperations } from "@/lib/monitors/operations";
import { exchangeOperations } from "@/lib/exchange/operations";
import { forwarderContractOperations } from "@/lib/forwarders/operations";
import type { Operation } from "@/lib/http/operation";
import { inventoryOperations } from "@/lib/inventory/operations";
import { authPlayerOperations } from "@/lib/iam/player-operations";
import { providerOperations } from "@/lib/iam/provider-operations";
import { credentialOperations } from "@/lib/iam/credential-operations";
import { accountActionOperations, deployAccount } from "@/lib/account-actions/operations";
import { googleOperations } from "@/lib/iam/google-operations";
import { siweOperations } from "@/lib/iam/siwe-operations";
import { intentOperations } from "@/lib/intents/operations";
import { paymasterOperations } from "@/lib/paymasters/operations";
import { paymasterServiceRpc } from "@/lib/paymaster-service/rpc-operation";
import { playerOwnershipOperations } from "@/lib/account-actions/player-operations";
import { playerOperations } from "@/lib/players/operations";
import { policyOperations, policyRuleOperations } from "@/lib/policies/operations";
import { evaluatePolicy, policyReportOperations } from "@/lib/policy-actions/operations";
import { sessionOperations } from "@/lib/sessions/operations";
import { sponsorshipOperations } from "@/lib/sponsorship/operations";
import { subscriptionOperations } from "@/lib/subscriptions/operations";
import { webhookOperations } from "@/lib/webhooks/operations";

// Identity API operations are added to `iamOperations` below by the lines marked for them.
const iamOperations: Operation[] = [
  // iam: credentials (sign-up, login, tokens, sessions)
  ...credentialOperations,
  // iam: providers (configurations, verification, players)
  ...providerOperations,
  ...authPlayerOperations,
  // iam: browser sign-in (Google, SIWE)
  ...siweOperations,
  ...googleOperations,
];

/** Every public operation, for the OpenAPI document. */
export const operations: Operation[] = [
  ...iamOperations,
  ...playerOperations,
  ...accountOperations,
  deployAccount,
  ...contractOperations,
  ...policyOperations,
  evaluatePolicy,
  ...policyRuleOperations,
  ...policyReportOperations,
  ...intentOperations,
  ...accountActionOperations,
  ...playerOwnershipOperations,
  ...webhookOperations,
  ...developerAccountOperations,
  ...sessionOperations,
  ...eventOperations,
  ...subscriptionOperations,
  // exchange, inventories, paymasters, forwarder contracts (one line each)
  ...exchangeOperations,
  ...inventoryOperations,
  ...forwarderContractOperations,
  ...paymasterOperations,
  paymasterServiceRpc,
  // the bundler RPC (issue 31)
  ...bundlerOperations,
  // sponsorship ledger (issue 30)
  ...sponsorshipOperations,
];
