import { toHex, type Address } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { beforeAll, describe, expect, it } from "vitest";
import { smartAccountAbi } from "@/contracts/artifacts";
import type { ProjectWithKeys } from "@/lib/projects/service";
import { call, expectError, newProject, waitForLanding } from "./api";
import { clientOf } from "./chain";

let project: ProjectWithKeys;

async function selfPolicy(key: string, chainId: number, withRule = true) {
  const { body: policy } = await call("POST", "/v1/policies", { key, json: { name: "self", chainId, strategy: { sponsorSchema: "pay_for_user" } } });
  if (withRule) await call("POST", "/v1/policy_rules", { key, json: { policy: policy.id, type: "account_functions" } });
  return policy as { id: string };
}

beforeAll(async () => {
  project = await newProject("account actions");
});

describe("ownership transfer", () => {
  it("requests and cancels a two-step transfer with sponsored self-calls that need an account_functions rule", async () => {
    const key = project.keys.test.secret;
    const policy = await selfPolicy(key, 31337);
    const { body: account } = await call("POST", "/v1/accounts", { key, json: { chainId: 31337 } });
    const newOwner = privateKeyToAccount(generatePrivateKey()).address;

    const noRule = await selfPolicy(key, 31337, false);
    expect(expectError(await call("POST", `/v1/accounts/${account.id}/request_transfer_ownership`, { key, json: { newOwnerAddress: newOwner, policy: noRule.id } }), 400).message).toMatch(
      /account itself/,
    );
    expectError(await call("POST", `/v1/accounts/${account.id}/request_transfer_ownership`, { key, json: { newOwnerAddress: account.ownerAddress, policy: policy.id } }), 400);
    expectError(await call("POST", `/v1/accounts/${account.id}/request_transfer_ownership`, { key, json: { newOwnerAddress: newOwner } }), 400);

    const requested = await call("POST", `/v1/accounts/${account.id}/request_transfer_ownership`, { key, form: { newOwnerAddress: newOwner, policy: policy.id } });
    expect(requested.status, JSON.stringify(requested.body)).toBe(200);
    expect(requested.body).toMatchObject({ object: "transactionIntent", account: { id: account.id }, policy: { id: policy.id } });
    expect((await waitForLanding(key, requested.body.id)).response.status).toBe(1);
    const synced = await call("POST", `/v1/accounts/${account.id}/sync`, { key });
    expect(synced.body).toMatchObject({ deployed: true, custodial: true, pendingOwnerAddress: newOwner });

    const cancelled = await call("POST", `/v1/accounts/${account.id}/cancel_transfer_ownership`, { key, json: { policy: policy.id } });
    expect((await waitForLanding(key, cancelled.body.id)).response.status).toBe(1);
    expect((await call("POST", `/v1/accounts/${account.id}/sync`, { key })).body.pendingOwnerAddress).toBeUndefined();
    // Nothing pending any more: the simulation finds the revert before anything is sent.
    expect(expectError(await call("POST", `/v1/accounts/${account.id}/cancel_transfer_ownership`, { key, json: { policy: policy.id } }), 400).message).toMatch(/NoPendingOwnershipTransfer/);
  }, 60_000);

  it("asks the owner of a non-custodial account to sign", async () => {
    const key = project.keys.test.secret;
    const policy = await selfPolicy(key, 31337);
    const owner = privateKeyToAccount(generatePrivateKey());
    const { body: account } = await call("POST", "/v1/accounts", { key, json: { chainId: 31337, externalOwnerAddress: owner.address } });
    const res = await call("POST", `/v1/accounts/${account.id}/request_transfer_ownership`, { key, json: { newOwnerAddress: privateKeyToAccount(generatePrivateKey()).address, policy: policy.id } });
    expect(res.body.nextAction).toMatchObject({ type: "sign_with_wallet" });
    const signature = await owner.signMessage({ message: { raw: res.body.nextAction.payload.userOperationHash } });
    await call("POST", `/v1/transaction_intents/${res.body.id}/signature`, { key, json: { signature } });
    expect((await waitForLanding(key, res.body.id)).response.status).toBe(1);
  }, 60_000);
});

describe("social recovery through the service as guardian", () => {
  it("starts a recovery, refuses to complete it early, and completes it after the recovery period", async () => {
    // On the live chain 31339, whose clock this test moves forward; live keys only use it here and in checks that do not mind.
    const key = project.keys.live.secret;
    const chainId = 31339;
    const policy = await selfPolicy(key, chainId);
    const { body: account } = await call("POST", "/v1/accounts", { key, json: { chainId, defaultGuardian: true } });
    const newOwner = privateKeyToAccount(generatePrivateKey()).address;
    // Not deployed yet: the service cannot act as its guardian.
    expect(expectError(await call("POST", `/v1/accounts/${account.id}/start_recovery`, { key, json: { newOwnerAddress: newOwner, policy: policy.id } }), 400).message).toMatch(/not a guardian/);
    expect((await call("POST", `/v1/accounts/${account.id}/deploy`, { key, json: { policy: policy.id } })).body.deployed).toBe(true);

    const started = await call("POST", `/v1/accounts/${account.id}/start_recovery`, { key, json: { newOwnerAddress: newOwner, policy: policy.id } });
    expect(started.status, JSON.stringify(started.body)).toBe(200);
    expect((await waitForLanding(key, started.body.id)).response.status).toBe(1);
    const client = clientOf(chainId);
    const [pending] = await client.readContract({ address: account.address as Address, abi: smartAccountAbi, functionName: "getRecovery" });
    expect(pending).toBe(newOwner);

    const early = expectError(await call("POST", `/v1/accounts/${account.id}/complete_recovery`, { key, json: { newOwnerAddress: newOwner, policy: policy.id } }), 400);
    expect(early.message).toMatch(/RecoveryNotReady/);
    const other = privateKeyToAccount(generatePrivateKey()).address;
    expect(expectError(await call("POST", `/v1/accounts/${account.id}/complete_recovery`, { key, json: { newOwnerAddress: other, policy: policy.id } }), 400).message).toMatch(/is to/);

    await client.request({ method: "evm_increaseTime" as never, params: [toHex(2 * 86_400 + 60)] as never });
    await client.request({ method: "evm_mine" as never, params: [] as never });
    const completed = await call("POST", `/v1/accounts/${account.id}/complete_recovery`, { key, form: { newOwnerAddress: newOwner, policy: policy.id } });
    expect(completed.status, JSON.stringify(completed.body)).toBe(200);
    expect((await waitForLanding(key, completed.body.id)).response.status).toBe(1);
    expect((await call("POST", `/v1/accounts/${account.id}/sync`, { key })).body).toMatchObject({ ownerAddress: newOwner, custodial: false });

    // An account without the service as guardian cannot be recovered through the API.
    const { body: plain } = await call("POST", "/v1/accounts", { key, json: { chainId } });
    await call("POST", `/v1/accounts/${plain.id}/deploy`, { key, json: { policy: policy.id } });
    expect(expectError(await call("POST", `/v1/accounts/${plain.id}/start_recovery`, { key, json: { newOwnerAddress: newOwner, policy: policy.id } }), 400).message).toMatch(/not a guardian/);
  }, 90_000);
});
