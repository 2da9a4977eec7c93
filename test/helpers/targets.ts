import { entryPointAbi } from "@/contracts/artifacts";
import { serviceDeployment } from "@/lib/chain/contracts";
import { localExchange } from "@/lib/exchange/deployment";
import { call, newProject } from "./api";

/** Real resources for every path of the API, and valid parameters for each operation, to aim hostile input at. */
export interface Targets {
  key: string;
  /** An id that exists, per OpenAPI path with `{id}`; under "{triggerId}" the trigger of the subscription there. */
  ids: Record<string, string>;
  /** Valid parameters per `METHOD /path`, so a hostile value in one parameter gets past the required ones. */
  valid: Record<string, Record<string, unknown>>;
}

const ADDRESS = "0x00000000000000000000000000000000000000bb";

export async function createTargets(): Promise<Targets> {
  const project = await newProject("hostile input");
  const key = project.keys.test.secret;
  const ids: Record<string, string> = {};
  const valid: Record<string, Record<string, unknown>> = {
    "POST /v1/accounts": { chainId: 31337 },
    "GET /v1/accounts": { player: "pla_x" },
    "POST /v1/policies": { name: "p", chainId: 31337, strategy: { sponsorSchema: "pay_for_user" } },
    "GET /v1/contracts/{id}/read": { functionName: "getNonce", functionArgs: [ADDRESS, "0"] },
    "POST /v1/accounts/{id}/sign_payload": {
      domain: { name: "App", version: "1", chainId: 31337, verifyingContract: ADDRESS },
      types: { Mail: [{ name: "contents", type: "string" }] },
      primaryType: "Mail",
      value: { contents: "hi" },
    },
  };
  const player = (await call("POST", "/v1/players", { key, form: { name: "target" } })).body.id;
  ids["/v1/players/{id}"] = player;
  ids["/v1/contracts/{id}"] = (await call("POST", "/v1/contracts", { key, form: { name: "target", chainId: 31337, address: ADDRESS } })).body.id;
  // Real targets for the sub-resources, so hostile values reach the chain-facing code.
  const account = (await call("POST", "/v1/accounts", { key, json: { chainId: 31337 } })).body.id;
  for (const path of ["/v1/accounts/{id}", "/v1/accounts/{id}/sync", "/v1/accounts/{id}/sign_payload", "/v1/accounts/{id}/deploy"]) ids[path] = account;
  const policy = (await call("POST", "/v1/policies", { key, json: { name: "target", chainId: 31337, strategy: { sponsorSchema: "pay_for_user" } } })).body.id;
  for (const path of ["/v1/policies/{id}", "/v1/policies/{id}/enable", "/v1/policies/{id}/disable"]) ids[path] = policy;
  ids["/v1/policy_rules/{id}"] = (await call("POST", "/v1/policy_rules", { key, json: { policy, type: "account_functions" } })).body.id;
  valid["POST /v1/accounts/{id}/deploy"] = { policy };
  for (const action of ["request_transfer_ownership", "cancel_transfer_ownership", "start_recovery", "complete_recovery"]) {
    ids[`/v1/accounts/{id}/${action}`] = account;
    valid[`POST /v1/accounts/{id}/${action}`] = { policy, ...(action !== "cancel_transfer_ownership" && { newOwnerAddress: ADDRESS }) };
  }
  valid["POST /v1/forwarder_contracts"] = { address: ADDRESS, chainId: 31337 };
  ids["/v1/forwarder_contracts/{id}"] = (await call("POST", "/v1/forwarder_contracts", { key, json: valid["POST /v1/forwarder_contracts"] })).body.id;
  valid["POST /v1/policy_rules"] = { policy, type: "rate_limit", functionName: "count_per_interval", countLimit: 1, timeIntervalType: "day", timeIntervalValue: 1 };
  valid["GET /v1/policy_rules"] = { policy };
  // An intent from an unfunded account with no policy: it validates, then fails on the chain's terms.
  valid["POST /v1/transaction_intents"] = { chainId: 31337, player, interactions: [{ to: ADDRESS, value: "0" }] };
  // A fixed_rate policy whose "token" has no code, and a developer account to withdraw to.
  const tokenPolicy = (
    await call("POST", "/v1/policies", {
      key,
      json: { name: "tokens", chainId: 31337, strategy: { sponsorSchema: "fixed_rate", tokenContract: ids["/v1/contracts/{id}"], tokenContractAmount: "1" } },
    })
  ).body.id;
  for (const path of ["/v1/policies/{id}/reports", "/v1/policies/{id}/reports/transaction_intents", "/v1/policies/{id}/withdraw"]) ids[path] = tokenPolicy;
  const developerAccount = (await call("POST", "/v1/settings/developer_accounts", { key, json: { name: "target" } })).body.id;
  ids["/v1/settings/developer_accounts/{id}"] = developerAccount;
  valid["POST /v1/policies/{id}/withdraw"] = { account: developerAccount, amount: "1" };
  valid["GET /v1/settings/developer_accounts/message_to_sign"] = { address: ADDRESS };
  // An event definition, a subscription with a trigger (to a port nothing listens on), and one logged attempt.
  valid["POST /v1/events"] = { name: "low", topic: "balance.dev_account", developerAccount, chainId: 31337, threshold: "1" };
  ids["/v1/events/{id}"] = (await call("POST", "/v1/events", { key, json: valid["POST /v1/events"] })).body.id;
  const hook = { target: "http://127.0.0.1:9/hook", type: "webhook" };
  valid["POST /v1/subscriptions"] = { topic: "transaction_intent.successful", triggers: [hook] };
  const subscription = (await call("POST", "/v1/subscriptions", { key, json: valid["POST /v1/subscriptions"] })).body.id;
  const created = (await call("GET", `/v1/subscriptions/${subscription}/triggers`, { key })).body.data[0].id;
  for (const path of ["/v1/subscriptions/{id}", "/v1/subscriptions/{id}/triggers", "/v1/subscriptions/{id}/triggers/{triggerId}", "/v1/subscriptions/{id}/triggers/{triggerId}/enable"]) ids[path] = subscription;
  ids["{triggerId}"] = created;
  valid["POST /v1/subscriptions/{id}/triggers"] = hook;
  valid["POST /v1/subscriptions/test"] = { subscription };
  await call("POST", "/v1/subscriptions/test", { key, json: { subscription } });
  const [attempt] = (await call("GET", "/v1/subscriptions/logs", { key, query: { subscription } })).body.data;
  for (const path of ["/v1/subscriptions/logs/{id}", "/v1/subscriptions/logs/{id}/redeliver"]) ids[path] = attempt.id;
  // The identity API: a signed-up player and its token, a provider configuration.
  const credentials = { email: "target@example.com", password: "a long enough password", name: "target" };
  valid["POST /iam/v1/auth/signup"] = { ...credentials, email: "other@example.com" };
  valid["POST /iam/v1/auth/login"] = { email: credentials.email, password: credentials.password };
  const signedUp = (await call("POST", "/iam/v1/auth/signup", { key, json: credentials })).body;
  for (const op of ["GET /iam/v1/verify", "GET /iam/v1/auth/verify"]) valid[op] = { token: signedUp.token };
  valid["POST /iam/v1/sessions"] = { refreshToken: signedUp.refreshToken };
  valid["POST /iam/v1/oauth"] = { provider: "telegramMiniApp", botToken: "123456:target-bot-token" };
  valid["POST /iam/v1/config"] = valid["POST /iam/v1/oauth"];
  valid["POST /iam/v1/oauth/verify"] = { provider: "telegramMiniApp", token: "query_id=x&hash=00", tokenType: "customToken" };
  valid["POST /iam/v1/players"] = { thirdPartyUserId: "target-user", thirdPartyProvider: "custom", preGenerateEmbeddedAccount: false };
  valid["POST /iam/v1/siwe/init"] = { address: ADDRESS };
  ids["/iam/v1/players/{id}"] = signedUp.player.id;
  ids["/v1/contracts/{id}/read"] = (
    await call("POST", "/v1/contracts", { key, json: { name: "EntryPoint", chainId: 31337, address: serviceDeployment().entryPoint, abi: entryPointAbi } })
  ).body.id;
  // A sponsored intent of a non-custodial account: it awaits its owner's signature (nothing is relayed).
  const entryPoint = ids["/v1/contracts/{id}/read"];
  await call("POST", "/v1/policy_rules", { key, json: { policy, type: "contract_functions", contract: entryPoint, functionName: "depositTo" } });
  const intent = await call("POST", "/v1/transaction_intents", {
    key,
    json: { chainId: 31337, externalOwnerAddress: ADDRESS, policy, interactions: [{ contract: entryPoint, functionName: "depositTo", functionArgs: [ADDRESS] }] },
  });
  if (intent.status !== 200) throw new Error(`target intent: ${JSON.stringify(intent.body)}`);
  for (const path of ["/v1/transaction_intents/{id}", "/v1/transaction_intents/{id}/signature"]) ids[path] = intent.body.id;
  // A registered paymaster, and our ERC-7677 service (its key in the path) asked for a stub under the policy.
  valid["POST /v1/paymasters"] = { address: serviceDeployment().paymaster, url: "http://127.0.0.1:9/rpc", context: { policy }, name: "target" };
  ids["/v1/paymasters/{id}"] = (await call("POST", "/v1/paymasters", { key, json: valid["POST /v1/paymasters"] })).body.id;
  ids["{publishableKey}"] = project.keys.test.publishable;
  const op = { sender: ADDRESS, nonce: "0x0", initCode: "0x", callData: "0x", maxFeePerGas: "0x1", maxPriorityFeePerGas: "0x1" };
  valid["POST /v1/paymaster_service/{publishableKey}"] = { jsonrpc: "2.0", id: 1, method: "pm_getPaymasterStubData", params: [op, serviceDeployment().entryPoint, "0x7a69", { policy }] };
  // A swap from the (unfunded) target account to a demo token of the local exchange: it prices routes on chain, then fails on the balance.
  const swap = { chainId: 31337, fromAddress: account, tokenInAddress: "native", tokenOutAddress: localExchange().tokens[0].address, amount: "1000", tradeType: "EXACT_INPUT" };
  for (const swapOp of ["POST /v1/exchange/quote", "POST /v1/exchange"]) valid[swapOp] = swap;
  valid["POST /v1/settings/exchange"] = { feeBasisPoints: 30, feeRecipient: ADDRESS };
  // Inventories: the player (no account: empty answers) and the account, over the project's registered contracts.
  for (const kind of ["native", "cryptocurrency", "nft"]) {
    ids[`/v1/players/{id}/inventory/${kind}`] = player;
    valid[`GET /v1/players/{id}/inventory/${kind}`] = { chainId: 31337 };
    ids[`/v1/accounts/{id}/inventory/${kind}`] = account;
  }
  return { key, ids, valid };
}
