import { z } from "zod";
import type { Queryable } from "@/lib/db/client";
import { listEnvelope } from "@/lib/http/list";
import { defineOperation } from "@/lib/http/operation";
import { deletedResource, listResponse } from "@/lib/http/resource";
import { presentPolicies, presentPolicy, presentPolicyRules } from "./present";
import * as rules from "./rules";
import {
  createPolicyInput,
  createPolicyRuleInput,
  getPolicyInput,
  getPolicyRuleInput,
  listPoliciesInput,
  listPolicyRulesInput,
  policyResponse,
  policyRuleResponse,
  updatePolicyInput,
  updatePolicyRuleInput,
} from "./schema";
import * as policies from "./service";
import { withUsage } from "./usage";

const tag = "Policies";

export const createPolicy = defineOperation({
  operationId: "createPolicy",
  method: "POST",
  path: "/v1/policies",
  summary: "Create a gas-sponsorship policy",
  tag,
  input: createPolicyInput,
  response: policyResponse,
  run: async ({ db, project, input }) => presentPolicy(db, project, await policies.createPolicy(db, project, input), input.expand),
});

export const listPolicies = defineOperation({
  operationId: "getPolicies",
  method: "GET",
  path: "/v1/policies",
  summary: "List policies, newest first",
  tag,
  input: listPoliciesInput,
  response: listResponse(policyResponse),
  run: async ({ db, project, input, path }) => {
    const { rows, total } = await policies.listPolicies(db, project, input);
    return listEnvelope(path, input, await presentPolicies(db, project, rows, input.expand), total);
  },
});

export const getPolicy = defineOperation({
  operationId: "getPolicy",
  method: "GET",
  path: "/v1/policies/{id}",
  summary: "Retrieve a policy",
  tag,
  input: getPolicyInput,
  response: policyResponse,
  run: async ({ db, project, params, input }) => presentPolicy(db, project, await policies.getPolicy(db, project, params.id), input.expand),
});

export const updatePolicy = defineOperation({
  operationId: "updatePolicy",
  method: "POST",
  path: "/v1/policies/{id}",
  summary: "Update a policy",
  tag,
  input: updatePolicyInput,
  response: policyResponse,
  run: async ({ db, project, params, input }) => presentPolicy(db, project, await policies.updatePolicy(db, project, params.id, input), input.expand),
});

export const deletePolicy = defineOperation({
  operationId: "deletePolicy",
  method: "DELETE",
  path: "/v1/policies/{id}",
  summary: "Delete a policy (soft: it stays readable with deleted=true and sponsors nothing)",
  tag,
  input: z.strictObject({}),
  response: deletedResource("policy"),
  run: async ({ db, project, params }) => policies.deletePolicy(db, project, params.id),
});

const toggle = (enabled: boolean) =>
  defineOperation({
    operationId: enabled ? "enablePolicy" : "disablePolicy",
    method: "PUT",
    path: `/v1/policies/{id}/${enabled ? "enable" : "disable"}`,
    summary: enabled ? "Enable a policy" : "Disable a policy: it sponsors nothing until enabled again",
    tag,
    input: z.strictObject({}),
    response: policyResponse,
    run: async ({ db, project, params }) => presentPolicy(db, project, await policies.setPolicyEnabled(db, project, params.id, enabled), undefined),
  });

export const enablePolicy = toggle(true);
export const disablePolicy = toggle(false);

const ruleTag = "Policy rules";

/** The rule as the API shows it, with the signing secret the operation just made (answered this once). */
const presentWithSecret = async (db: Queryable, rule: rules.PolicyRuleWithSecret, expand: readonly string[] | undefined) => {
  const [shown] = await presentPolicyRules(db, [rule], expand);
  return rule.secret ? { ...shown!, secret: rule.secret } : shown!;
};

export const createPolicyRule = defineOperation({
  operationId: "createPolicyRule",
  method: "POST",
  path: "/v1/policy_rules",
  summary: "Add a rule to a policy",
  tag: ruleTag,
  input: createPolicyRuleInput,
  response: policyRuleResponse,
  run: async ({ db, project, input }) => presentWithSecret(db, await rules.createPolicyRule(db, project, input), input.expand),
});

export const listPolicyRules = defineOperation({
  operationId: "getPolicyRules",
  method: "GET",
  path: "/v1/policy_rules",
  summary: "List a policy's rules, newest first",
  tag: ruleTag,
  input: listPolicyRulesInput,
  response: listResponse(policyRuleResponse),
  run: async ({ db, project, input, path }) => {
    const { rows, total } = await rules.listPolicyRules(db, project, input);
    return listEnvelope(path, input, await withUsage(db, project, rows, await presentPolicyRules(db, rows, input.expand), input.expand), total);
  },
});

export const getPolicyRule = defineOperation({
  operationId: "getPolicyRule",
  method: "GET",
  path: "/v1/policy_rules/{id}",
  summary: "Retrieve a policy rule",
  tag: ruleTag,
  input: getPolicyRuleInput,
  response: policyRuleResponse,
  run: async ({ db, project, params, input }) => {
    const row = await rules.getPolicyRule(db, project, params.id);
    const subject = { player: input.player, account: input.account };
    return (await withUsage(db, project, [row], await presentPolicyRules(db, [row], input.expand), input.expand, subject))[0]!;
  },
});

export const updatePolicyRule = defineOperation({
  operationId: "updatePolicyRule",
  method: "POST",
  path: "/v1/policy_rules/{id}",
  summary: "Update a policy rule",
  tag: ruleTag,
  input: updatePolicyRuleInput,
  response: policyRuleResponse,
  run: async ({ db, project, params, input }) => presentWithSecret(db, await rules.updatePolicyRule(db, project, params.id, input), input.expand),
});

export const deletePolicyRule = defineOperation({
  operationId: "deletePolicyRule",
  method: "DELETE",
  path: "/v1/policy_rules/{id}",
  summary: "Delete a policy rule",
  tag: ruleTag,
  input: z.strictObject({}),
  response: deletedResource("policyRule"),
  run: async ({ db, project, params }) => rules.deletePolicyRule(db, project, params.id),
});

export const policyOperations = [createPolicy, listPolicies, getPolicy, updatePolicy, deletePolicy, enablePolicy, disablePolicy];
export const policyRuleOperations = [createPolicyRule, listPolicyRules, getPolicyRule, updatePolicyRule, deletePolicyRule];
