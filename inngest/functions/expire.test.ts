import { InngestTestEngine } from "@inngest/test";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { serviceDeployment } from "@/lib/chain/contracts";
import { call, expectError, newProject } from "@/test/helpers/api";
import { entryPointAbi } from "@/contracts/artifacts";
import { eventually, intentRow, receiver, runInProcessOnly } from "@/test/helpers/relay-fixtures";
import { expiryJob } from "@/lib/jobs/messages";
import { cancelUnsignedIntent } from "./expire";
import { deliverEvent } from "./deliver";

let key: string;
let projectId: string;
let hooks: Awaited<ReturnType<typeof receiver>>;
let nonCustodialIntent: () => Promise<{ id: string; nextAction: { payload: { userOperationHash: `0x${string}` } } }>;
const owner = privateKeyToAccount(generatePrivateKey());

// The hour-long wait for the signature, mocked so the test does not wait. A fresh mock per engine:
// @inngest/test keeps a run's step results on the mock objects it is given.
const noWait = () => [{ id: "wait-for-signature", handler: () => null }];

beforeAll(async () => {
  await runInProcessOnly([deliverEvent]);
  const project = await newProject("unsigned intents");
  key = project.keys.test.secret;
  projectId = project.id;
  hooks = await receiver();
  await call("POST", "/v1/settings/webhook", { key, json: { url: `${hooks.url}/hooks` } });
  const abi = entryPointAbi.filter((i) => i.type === "function" && i.name === "depositTo");
  const { body: contract } = await call("POST", "/v1/contracts", { key, json: { name: "EntryPoint", chainId: 31337, address: serviceDeployment().entryPoint, abi } });
  const { body: policy } = await call("POST", "/v1/policies", { key, json: { name: "sponsor", chainId: 31337, strategy: { sponsorSchema: "pay_for_user" } } });
  await call("POST", "/v1/policy_rules", { key, json: { policy: policy.id, type: "contract_functions", contract: contract.id, functionName: "depositTo" } });
  nonCustodialIntent = async () => {
    const res = await call("POST", "/v1/transaction_intents", {
      key,
      json: { chainId: 31337, policy: policy.id, externalOwnerAddress: owner.address, interactions: [{ contract: contract.id, functionName: "depositTo", functionArgs: [owner.address] }] },
    });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    return res.body;
  };
});
afterAll(() => hooks?.close());

describe("the cancel-unsigned-intent function under @inngest/test", () => {
  it("cancels a sponsored intent nobody signed once its sponsorship ends, tells the webhook, and refuses a late signature", async () => {
    const intent = await nonCustodialIntent();
    const t = new InngestTestEngine({ function: cancelUnsignedIntent, events: [expiryJob(intent.id, projectId)], steps: noWait() });
    const { result, error } = await t.execute();
    expect(error).toBeUndefined();
    expect(result).toEqual({ intentId: intent.id, cancelled: true });
    expect(await intentRow(intent.id)).toMatchObject({ status: "cancelled" });
    const hook = await eventually("the cancelled webhook", () => hooks.received.find((r) => JSON.parse(r.body).data.id === intent.id));
    expect(JSON.parse(hook.body)).toMatchObject({ type: "transaction_intent.cancelled", data: { id: intent.id } });
    const late = await owner.signMessage({ message: { raw: intent.nextAction.payload.userOperationHash } });
    expect(expectError(await call("POST", `/v1/transaction_intents/${intent.id}/signature`, { key, json: { signature: late } }), 409).message).toMatch(/cancelled/);
  });

  it("leaves a signed intent alone", async () => {
    const intent = await nonCustodialIntent();
    const signature = await owner.signMessage({ message: { raw: intent.nextAction.payload.userOperationHash } });
    expect((await call("POST", `/v1/transaction_intents/${intent.id}/signature`, { key, json: { signature } })).status).toBe(200);
    const t = new InngestTestEngine({ function: cancelUnsignedIntent, events: [expiryJob(intent.id, projectId)], steps: noWait() });
    const { result, ctx } = await t.execute();
    expect(result).toEqual({ intentId: intent.id, cancelled: false });
    expect((ctx.step.run as unknown as { mock: { calls: unknown[][] } }).mock.calls.map((c) => c[0])).toEqual(["cancel"]);
    expect((await intentRow(intent.id)).status).not.toBe("cancelled");
  });
});
