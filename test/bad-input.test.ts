import qs from "qs";
import { beforeAll, describe, expect, it } from "vitest";
import { entryPointAbi } from "@/contracts/artifacts";
import { operations } from "@/lib/api";
import { serviceDeployment } from "@/lib/chain/contracts";
import { buildOpenApi } from "@/lib/http/openapi";
import type { ProjectWithKeys } from "@/lib/projects/service";
import { call, newProject } from "./api";

const HOSTILE: unknown[] = [
  null, true, false, 0, -1, 1.5, 1e308, -1e308, "", " ", "x".repeat(20_000), "NaN", "1e999", "-0", "0x", "💥\u202e",
  "%00", "\u0000", "' or 1=1 --", [], [null], [[[]]], {}, { a: { b: { c: {} } } }, { __proto__: { polluted: true } },
];

/** Valid parameters each hostile value is mixed into, so it gets past the required-field checks. */
const VALID: Record<string, Record<string, unknown>> = {
  "POST /v1/accounts": { chainId: 31337 },
  "GET /v1/accounts": { player: "pla_x" },
  "POST /v1/policies": { name: "p", chainId: 31337, strategy: { sponsorSchema: "pay_for_user" } },
  "GET /v1/contracts/{id}/read": { functionName: "getNonce", functionArgs: ["0x00000000000000000000000000000000000000bb", "0"] },
  "POST /v1/accounts/{id}/sign_payload": {
    domain: { name: "App", version: "1", chainId: 31337, verifyingContract: "0x00000000000000000000000000000000000000bb" },
    types: { Mail: [{ name: "contents", type: "string" }] },
    primaryType: "Mail",
    value: { contents: "hi" },
  },
};

let project: ProjectWithKeys;
const ids: Record<string, string> = {};
const doc = buildOpenApi(operations, "http://127.0.0.1:3000");

beforeAll(async () => {
  project = await newProject();
  const key = project.keys.test.secret;
  ids["/v1/players/{id}"] = (await call("POST", "/v1/players", { key, form: { name: "target" } })).body.id;
  ids["/v1/contracts/{id}"] = (
    await call("POST", "/v1/contracts", { key, form: { name: "target", chainId: 31337, address: "0x00000000000000000000000000000000000000bb" } })
  ).body.id;
  // Real targets for the sub-resources, so hostile values reach the chain-facing code.
  const account = (await call("POST", "/v1/accounts", { key, json: { chainId: 31337 } })).body.id;
  for (const path of ["/v1/accounts/{id}", "/v1/accounts/{id}/sync", "/v1/accounts/{id}/sign_payload"]) ids[path] = account;
  const policy = (await call("POST", "/v1/policies", { key, json: { name: "target", chainId: 31337, strategy: { sponsorSchema: "pay_for_user" } } })).body.id;
  for (const path of ["/v1/policies/{id}", "/v1/policies/{id}/enable", "/v1/policies/{id}/disable"]) ids[path] = policy;
  ids["/v1/policy_rules/{id}"] = (await call("POST", "/v1/policy_rules", { key, json: { policy, type: "account_functions" } })).body.id;
  ids["/v1/accounts/{id}/deploy"] = account;
  VALID["POST /v1/accounts/{id}/deploy"] = { policy };
  for (const action of ["request_transfer_ownership", "cancel_transfer_ownership", "start_recovery", "complete_recovery"]) {
    ids[`/v1/accounts/{id}/${action}`] = account;
    VALID[`POST /v1/accounts/{id}/${action}`] = { policy, newOwnerAddress: "0x00000000000000000000000000000000000000bb" };
  }
  delete VALID["POST /v1/accounts/{id}/cancel_transfer_ownership"]!.newOwnerAddress;
  VALID["POST /v1/policy_rules"] = { policy, type: "rate_limit", functionName: "count_per_interval", countLimit: 1, timeIntervalType: "day", timeIntervalValue: 1 };
  VALID["GET /v1/policy_rules"] = { policy };
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
  VALID["POST /v1/policies/{id}/withdraw"] = { account: developerAccount, amount: "1" };
  VALID["GET /v1/settings/developer_accounts/message_to_sign"] = { address: "0x00000000000000000000000000000000000000bb" };
  ids["/v1/contracts/{id}/read"] = (
    await call("POST", "/v1/contracts", { key, json: { name: "EntryPoint", chainId: 31337, address: serviceDeployment().entryPoint, abi: entryPointAbi } })
  ).body.id;
});

describe("hostile input", () => {
  it("never gets a 5xx from any operation, parameter, value or encoding", async () => {
    const key = project.keys.test.secret;
    const failures: string[] = [];
    let calls = 0;
    for (const op of operations) {
      const path = op.path.replace("{id}", ids[op.path] ?? "pla_x");
      const entry = (doc.paths as Record<string, Record<string, any>>)[op.path]![op.method.toLowerCase()];
      const schema = entry.requestBody?.content["application/json"].schema;
      const names: string[] = schema ? Object.keys(schema.properties ?? {}) : entry.parameters.filter((p: any) => p.in === "query").map((p: any) => p.name);
      for (const name of [...names, "unknown"]) {
        for (const value of HOSTILE) {
          const input = { ...VALID[`${op.method} ${op.path}`], [name]: value };
          const attempts =
            op.method === "GET" || op.method === "DELETE"
              ? [call(op.method, `${path}?${qs.stringify(input)}`, { key })]
              : [call(op.method, path, { key, json: input }), call(op.method, path, { key, form: qs.stringify(input) })];
          for (const res of await Promise.all(attempts)) {
            calls++;
            if (res.status >= 500 || !(res.status < 300 || res.body?.error?.message)) {
              failures.push(`${op.method} ${op.path} ${name}=${JSON.stringify(value)?.slice(0, 40)} → ${res.status} ${JSON.stringify(res.body).slice(0, 200)}`);
            }
          }
        }
      }
    }
    expect(failures).toEqual([]);
    expect(calls).toBeGreaterThan(500);
  }, 120_000);
});
