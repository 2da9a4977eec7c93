import { beforeAll, describe, expect, it } from "vitest";
import type { ProjectWithKeys } from "@/lib/projects/service";
import { call, expectError, newProject } from "./helpers/api";

let project: ProjectWithKeys;
let key: string;
let token: { id: string };
let game: { id: string };
let otherChainContract: { id: string };

const ERC20 = [
  { type: "function", name: "transfer", stateMutability: "nonpayable", inputs: [{ name: "to", type: "address" }, { name: "amount", type: "uint256" }], outputs: [{ type: "bool" }] },
  { type: "function", name: "balanceOf", stateMutability: "view", inputs: [{ name: "owner", type: "address" }], outputs: [{ type: "uint256" }] },
];
const GAME = [{ type: "function", name: "mint", stateMutability: "nonpayable", inputs: [{ name: "to", type: "address" }], outputs: [] }];

let addressCounter = 0x1000;
const nextAddress = () => `0x${(addressCounter++).toString(16).padStart(40, "0")}`;

const register = async (name: string, abi: unknown, chainId = 31337) =>
  (await call("POST", "/v1/contracts", { key, json: { name, chainId, address: nextAddress(), abi } })).body;

const createPolicy = (body: Record<string, unknown>, options: { form?: boolean; key?: string } = {}) =>
  call("POST", "/v1/policies", { key: options.key ?? key, [options.form ? "form" : "json"]: body });

const createRule = (body: Record<string, unknown>, form = false) => call("POST", "/v1/policy_rules", { key, [form ? "form" : "json"]: body });

const sponsorAll = { sponsorSchema: "pay_for_user" };

beforeAll(async () => {
  project = await newProject("policies");
  key = project.keys.test.secret;
  token = await register("Gold", ERC20);
  game = await register("Game", GAME);
  otherChainContract = await register("Elsewhere", GAME, 31338);
});

describe("policies", () => {
  it("creates pay_for_user and fixed_rate policies in both encodings", async () => {
    const form = await createPolicy({ name: "Free mints", chainId: "31337", strategy: { sponsorSchema: "pay_for_user" } }, { form: true });
    expect(form.status).toBe(200);
    expect(form.body).toMatchObject({
      object: "policy",
      name: "Free mints",
      chainId: 31337,
      strategy: { sponsorSchema: "pay_for_user" },
      enabled: true,
      deleted: false,
      transactionIntents: [],
      policyRules: [],
    });
    expect(form.body.id).toMatch(/^pol_/);
    const fixed = await createPolicy({ name: "Pay in gold", chainId: 31337, strategy: { sponsorSchema: "fixed_rate", tokenContract: token.id, tokenContractAmount: "1000000000000000000" } });
    expect(fixed.body.strategy).toEqual({ sponsorSchema: "fixed_rate", tokenContract: token.id, tokenContractAmount: "1000000000000000000" });
    const numeric = await createPolicy({ name: "n", chainId: 31337, strategy: { sponsorSchema: "charge_custom_tokens", tokenContract: token.id, tokenContractAmount: 5 } });
    expect(numeric.body.strategy.tokenContractAmount).toBe("5");
  });

  it("refuses incoherent strategies, custom paymasters and chains outside the key's mode, with details", async () => {
    const base = { name: "p", chainId: 31337 };
    expect(expectError(await createPolicy({ ...base, strategy: { sponsorSchema: "fixed_rate" } }), 400).details).toMatchObject({
      "strategy[tokenContract]": expect.anything(),
      "strategy[tokenContractAmount]": expect.anything(),
    });
    expectError(await createPolicy({ ...base, strategy: { sponsorSchema: "pay_for_user", tokenContract: token.id } }), 400);
    expect(expectError(await createPolicy({ ...base, strategy: { sponsorSchema: "fixed_rate", tokenContract: "con_missing", tokenContractAmount: "1" } }), 400).details?.["strategy[tokenContract]"]).toBeDefined();
    expectError(await createPolicy({ ...base, strategy: { sponsorSchema: "fixed_rate", tokenContract: otherChainContract.id, tokenContractAmount: "1" } }), 400);
    expectError(await createPolicy({ ...base, strategy: { sponsorSchema: "fixed_rate", tokenContract: token.id, tokenContractAmount: "-1" } }), 400);
    expectError(await createPolicy({ ...base, strategy: { sponsorSchema: "free" } }), 400);
    expectError(await createPolicy({ ...base }), 400);
    expect(expectError(await createPolicy({ ...base, strategy: sponsorAll, paymaster: "pay_1" }), 400).details?.paymaster).toBeDefined();
    expect(expectError(await createPolicy({ ...base, chainId: 31339, strategy: sponsorAll }), 400).message).toMatch(/live chain/);
    expectError(await createPolicy({ ...base, chainId: 31337, strategy: sponsorAll }, { key: project.keys.live.secret }), 400);
    expectError(await createPolicy({ ...base, chainId: 1, strategy: sponsorAll }), 400);
    expectError(await createPolicy({ name: "", chainId: 31337, strategy: sponsorAll }), 400);
  });

  it("lists with filters and pagination, gets, updates, enables, disables and soft-deletes", async () => {
    const own = await newProject("policy list");
    const k = own.keys.test.secret;
    const made = [];
    for (const [name, chainId] of [["a", 31337], ["b", 31338], ["a", 31338]] as const) {
      made.push((await createPolicy({ name, chainId, strategy: sponsorAll }, { key: k })).body);
    }
    const list = await call("GET", "/v1/policies", { key: k });
    expect(list.body).toMatchObject({ object: "list", total: 3, start: 0, end: 3 });
    expect(list.body.data.map((p: { id: string }) => p.id)).toEqual([made[2].id, made[1].id, made[0].id]);
    expect((await call("GET", "/v1/policies", { key: k, query: { name: "a", chainId: 31338 } })).body.data.map((p: { id: string }) => p.id)).toEqual([made[2].id]);
    expect((await call("GET", "/v1/policies", { key: k, query: { limit: 1, skip: 1 } })).body.data.map((p: { id: string }) => p.id)).toEqual([made[1].id]);

    const disabled = await call("PUT", `/v1/policies/${made[0].id}/disable`, { key: k });
    expect(disabled.body).toMatchObject({ id: made[0].id, enabled: false });
    expect((await call("GET", "/v1/policies", { key: k, query: { enabled: false } })).body.data.map((p: { id: string }) => p.id)).toEqual([made[0].id]);
    expect((await call("PUT", `/v1/policies/${made[0].id}/enable`, { key: k })).body.enabled).toBe(true);
    expectError(await call("POST", `/v1/policies/${made[0].id}/enable`, { key: k }), 405);

    const renamed = await call("POST", `/v1/policies/${made[0].id}`, { key: k, form: { name: "renamed", chainId: "31338" } });
    expect(renamed.body).toMatchObject({ name: "renamed", chainId: 31338 });
    expect((await call("GET", `/v1/policies/${made[0].id}`, { key: k })).body).toEqual(renamed.body);

    const deleted = await call("DELETE", `/v1/policies/${made[1].id}`, { key: k });
    expect(deleted.body).toEqual({ id: made[1].id, object: "policy", deleted: true });
    expect((await call("GET", `/v1/policies/${made[1].id}`, { key: k })).body.deleted).toBe(true);
    expect((await call("GET", "/v1/policies", { key: k })).body.total).toBe(2);
    expect((await call("GET", "/v1/policies", { key: k, query: { deleted: true } })).body.data.map((p: { id: string }) => p.id)).toEqual([made[1].id]);
    const viaUpdate = await call("POST", `/v1/policies/${made[2].id}`, { key: k, json: { deleted: true } });
    expect(viaUpdate.body.deleted).toBe(true);

    for (const outsider of [key, own.keys.live.secret]) {
      expectError(await call("GET", `/v1/policies/${made[0].id}`, { key: outsider }), 404);
      expectError(await call("PUT", `/v1/policies/${made[0].id}/disable`, { key: outsider }), 404);
      expectError(await call("POST", `/v1/policies/${made[0].id}`, { key: outsider, json: { name: "x" } }), 404);
      expectError(await call("DELETE", `/v1/policies/${made[0].id}`, { key: outsider }), 404);
    }
  });
});

describe("policy rules", () => {
  it("creates each of the five kinds, and policies list and expand them", async () => {
    const { body: policy } = await createPolicy({ name: "all kinds", chainId: 31337, strategy: sponsorAll });
    const kinds = [
      // limit contract sponsorship: one function of one contract, every function, or every contract
      { type: "contract_functions", contract: game.id, functionName: "mint" },
      { type: "contract_functions", contract: token.id, functionName: "All functions" },
      { type: "contract_functions", wildcard: true, functionName: "All functions" },
      // allow self-account sponsorship
      { type: "account_functions" },
      // gas per transaction, gas per interval, number of transactions per interval
      { type: "rate_limit", functionName: "gas_per_transaction", gasLimit: "500000" },
      { type: "rate_limit", functionName: "gas_per_interval", gasLimit: "10000000", timeIntervalType: "day", timeIntervalValue: 1 },
      { type: "rate_limit", functionName: "count_per_interval", countLimit: 3, timeIntervalType: "minute", timeIntervalValue: "10" },
    ];
    const rules = [];
    for (const [i, kind] of kinds.entries()) {
      const res = await createRule({ ...kind, policy: policy.id }, i % 2 === 0);
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      rules.push(res.body);
    }
    expect(rules[0]).toMatchObject({ object: "policyRule", type: "contract_functions", contract: { id: game.id }, functionName: "mint", wildcard: false });
    expect(rules[0].id).toMatch(/^afu_/);
    expect(rules[2]).toMatchObject({ wildcard: true, functionName: "All functions" });
    expect(rules[2].contract).toBeUndefined();
    expect(rules[3]).toEqual({ id: rules[3].id, object: "policyRule", createdAt: rules[3].createdAt, type: "account_functions" });
    expect(rules[4]).toMatchObject({ type: "rate_limit", functionName: "gas_per_transaction", gasLimit: "500000" });
    expect(rules[6]).toMatchObject({ functionName: "count_per_interval", countLimit: 3, timeIntervalType: "minute", timeIntervalValue: 10 });
    expect(rules[6].gasLimit).toBeUndefined();

    const got = await call("GET", `/v1/policies/${policy.id}`, { key });
    expect(got.body.policyRules).toEqual(rules.map((r) => ({ id: r.id })));
    const expanded = await call("GET", `/v1/policies/${policy.id}`, { key, query: { expand: ["policyRules"] } });
    expect(expanded.body.policyRules).toEqual(rules);

    const list = await call("GET", "/v1/policy_rules", { key, query: { policy: policy.id, limit: 100, expand: ["contract"] } });
    expect(list.body.total).toBe(7);
    expect(list.body.data[list.body.data.length - 1]).toMatchObject({ id: rules[0].id, contract: { id: game.id, object: "contract", name: "Game" } });
    expect((await call("GET", "/v1/policy_rules", { key, query: { policy: policy.id } })).body.data).toHaveLength(7);
  });

  it("refuses rules whose fields do not fit their type, naming the fields", async () => {
    const { body: policy } = await createPolicy({ name: "strict", chainId: 31337, strategy: sponsorAll });
    const refused = async (body: Record<string, unknown>, field: string) => {
      const error = expectError(await createRule({ policy: policy.id, ...body }), 400);
      expect(error.details?.[field], JSON.stringify(error)).toBeDefined();
    };
    await refused({ type: "contract_functions", functionName: "mint" }, "contract");
    await refused({ type: "contract_functions", contract: game.id }, "functionName");
    await refused({ type: "contract_functions", contract: game.id, functionName: "burn" }, "functionName");
    await refused({ type: "contract_functions", contract: game.id, functionName: "mint", gasLimit: "1" }, "gasLimit");
    await refused({ type: "contract_functions", wildcard: true, contract: game.id, functionName: "mint" }, "contract");
    await refused({ type: "contract_functions", contract: otherChainContract.id, functionName: "mint" }, "contract");
    await refused({ type: "contract_functions", contract: "con_missing", functionName: "mint" }, "contract");
    await refused({ type: "account_functions", contract: game.id }, "contract");
    await refused({ type: "rate_limit", functionName: "mint" }, "functionName");
    await refused({ type: "rate_limit", functionName: "gas_per_transaction" }, "gasLimit");
    await refused({ type: "rate_limit", functionName: "gas_per_interval", gasLimit: "1" }, "timeIntervalType");
    await refused({ type: "rate_limit", functionName: "count_per_interval", countLimit: 1, timeIntervalType: "day" }, "timeIntervalValue");
    await refused({ type: "rate_limit", functionName: "gas_per_transaction", gasLimit: "1", countLimit: 2 }, "countLimit");
    await refused({ type: "rate_limit", functionName: "count_per_interval", countLimit: 0, timeIntervalType: "day", timeIntervalValue: 1 }, "countLimit");
    await refused({ type: "rate_limit", functionName: "count_per_interval", countLimit: 1, timeIntervalType: "year", timeIntervalValue: 1 }, "timeIntervalType");
    await refused({ type: "anything" }, "type");
    await refused({ type: "account_functions", policy: "pol_missing" }, "policy");
    expect(expectError(await call("POST", "/v1/policy_rules", { key, json: { type: "account_functions" } }), 400).details?.policy).toBeDefined();

    // a contract deleted since cannot be ruled on; a deleted policy takes no rules
    const doomed = await register("Doomed", GAME);
    await call("DELETE", `/v1/contracts/${doomed.id}`, { key });
    await refused({ type: "contract_functions", contract: doomed.id, functionName: "mint" }, "contract");
    await call("DELETE", `/v1/policies/${policy.id}`, { key });
    await refused({ type: "account_functions" }, "policy");
  });

  it("updates keeping unsent fields, changes type, deletes, and stays within its project", async () => {
    const { body: policy } = await createPolicy({ name: "editable", chainId: 31337, strategy: sponsorAll });
    const { body: rule } = await createRule({ policy: policy.id, type: "rate_limit", functionName: "count_per_interval", countLimit: 5, timeIntervalType: "hour", timeIntervalValue: 1 });
    const raised = await call("POST", `/v1/policy_rules/${rule.id}`, { key, form: { type: "rate_limit", countLimit: "10" } });
    expect(raised.body).toMatchObject({ id: rule.id, countLimit: 10, timeIntervalType: "hour", timeIntervalValue: 1 });
    const retyped = await call("POST", `/v1/policy_rules/${rule.id}`, { key, json: { type: "contract_functions", contract: game.id, functionName: "mint" } });
    expect(retyped.body).toMatchObject({ type: "contract_functions", contract: { id: game.id }, functionName: "mint" });
    expect(retyped.body.countLimit).toBeUndefined();
    expect(expectError(await call("POST", `/v1/policy_rules/${rule.id}`, { key, json: { functionName: "burn" } }), 400).details?.functionName).toBeDefined();
    const wild = await call("POST", `/v1/policy_rules/${rule.id}`, { key, json: { wildcard: true } });
    expect(wild.body).toMatchObject({ wildcard: true, functionName: "mint" });
    expect(wild.body.contract).toBeUndefined();

    // moving a policy with contract rules to another chain would orphan them
    const { body: bound } = await createRule({ policy: policy.id, type: "contract_functions", contract: game.id, functionName: "mint" });
    expectError(await call("POST", `/v1/policies/${policy.id}`, { key, json: { chainId: 31338 } }), 409);

    const other = await newProject("rule outsider");
    expectError(await call("POST", `/v1/policy_rules/${bound.id}`, { key: other.keys.test.secret, json: { functionName: "mint" } }), 404);
    expectError(await call("DELETE", `/v1/policy_rules/${bound.id}`, { key: other.keys.test.secret }), 404);
    expectError(await call("GET", "/v1/policy_rules", { key: other.keys.test.secret, query: { policy: policy.id } }), 400);
    expectError(await call("POST", "/v1/policy_rules", { key: other.keys.test.secret, json: { policy: policy.id, type: "account_functions" } }), 400);

    expect((await call("DELETE", `/v1/policy_rules/${bound.id}`, { key })).body).toEqual({ id: bound.id, object: "policyRule", deleted: true });
    expectError(await call("DELETE", `/v1/policy_rules/${bound.id}`, { key }), 404);
    expect((await call("GET", `/v1/policies/${policy.id}`, { key })).body.policyRules).toEqual([{ id: rule.id }]);
    // the remaining rule is a wildcard one, bound to no contract: now the policy may move
    expect((await call("POST", `/v1/policies/${policy.id}`, { key, json: { chainId: 31338 } })).body.chainId).toBe(31338);
  });
});
