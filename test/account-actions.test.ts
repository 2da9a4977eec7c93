import { eq } from "drizzle-orm";
import { decodeFunctionData, encodeFunctionData, slice, toHex, type Address, type Hex } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { beforeAll, describe, expect, it } from "vitest";
import { accountFactoryAbi, smartAccountAbi } from "@/contracts/artifacts";
import { accountSalt } from "@/lib/chain/accounts";
import { serviceDeployment } from "@/lib/chain/contracts";
import { getDb } from "@/lib/db/client";
import { credit } from "@/lib/sponsorship/ledger";
import { transactionIntents } from "@/lib/db/schema";
import type { ProjectWithKeys } from "@/lib/projects/service";
import { call, expectError, newProject, waitForLanding } from "./helpers/api";
import { serviceAccount } from "@/lib/keys/service-keys";
import { clientOf, fundedWallet, mined } from "./helpers/chain";

let project: ProjectWithKeys;

async function selfPolicy(key: string, chainId: number, withRule = true) {
  const { body: policy } = await call("POST", "/v1/policies", { key, json: { name: "self", chainId, strategy: { sponsorSchema: "pay_for_user" } } });
  if (withRule) await call("POST", "/v1/policy_rules", { key, json: { policy: policy.id, type: "account_functions" } });
  return policy as { id: string };
}

beforeAll(async () => {
  project = await newProject("account actions");
  // Live mode starts with no sponsorship balance: these tests sponsor on the live chain 31339.
  await credit(await getDb(), { projectId: project.id, livemode: true }, { chainId: 31339, amount: 10n ** 18n, cause: "funding", note: "test" });
});

describe("ownership transfer", () => {
  it("requests and cancels a two-step transfer with sponsored self-calls that need an account_functions rule", async () => {
    const key = project.keys.test.secret;
    const policy = await selfPolicy(key, 31337);
    const { body: account } = await call("POST", "/v1/accounts", { key, json: { chainId: 31337 } });
    const newOwner = privateKeyToAccount(generatePrivateKey()).address;

    const noRule = await selfPolicy(key, 31337, false);
    expect(expectError(await call("POST", `/v1/accounts/${account.id}/request_transfer_ownership`, { key, json: { newOwnerAddress: newOwner, policy: noRule.id } }), 402)).toMatchObject({
      code: "no_matching_rule",
      message: expect.stringMatching(/account itself/),
    });
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

const read = <T>(chainId: number, address: string, functionName: string, args: unknown[] = []) =>
  clientOf(chainId).readContract({ address: address as Address, abi: smartAccountAbi, functionName, args } as never) as Promise<T>;

/** Moves the chain's clock past the 2-day recovery period. */
async function afterRecoveryPeriod(chainId: number) {
  const client = clientOf(chainId);
  await client.request({ method: "evm_increaseTime" as never, params: [toHex(2 * 86_400 + 60)] as never });
  await client.request({ method: "evm_mine" as never, params: [] as never });
}

// On the live chain 31339, whose clock these tests move forward; live keys only use it here and in checks that do not mind.
describe("social recovery through the service as guardian", () => {
  it("recovers an account created with defaultGuardian before its first operation, completing only after the recovery period", async () => {
    const key = project.keys.live.secret;
    const chainId = 31339;
    const policy = await selfPolicy(key, chainId);
    const { body: account } = await call("POST", "/v1/accounts", { key, json: { chainId, defaultGuardian: true } });
    const newOwner = privateKeyToAccount(generatePrivateKey()).address;
    expect(await clientOf(chainId).getCode({ address: account.address })).toBeUndefined();
    // Nothing to complete before anything started.
    expect(expectError(await call("POST", `/v1/accounts/${account.id}/complete_recovery`, { key, json: { newOwnerAddress: newOwner, policy: policy.id } }), 400).message).toMatch(
      /no recovery in progress/,
    );

    // Not deployed yet: one operation deploys it, makes the service its guardian and starts the recovery.
    const started = await call("POST", `/v1/accounts/${account.id}/start_recovery`, { key, json: { newOwnerAddress: newOwner, policy: policy.id } });
    expect(started.status, JSON.stringify(started.body)).toBe(200);
    expect((await waitForLanding(key, started.body.id)).response.status).toBe(1);
    expect(await read(chainId, account.address, "getGuardians")).toEqual([serviceAccount("guardian").address]);
    const [pending, , required] = await read<[Address, bigint, number]>(chainId, account.address, "getRecovery");
    expect([pending, required]).toEqual([newOwner, 1]);

    const early = expectError(await call("POST", `/v1/accounts/${account.id}/complete_recovery`, { key, json: { newOwnerAddress: newOwner, policy: policy.id } }), 400);
    expect(early.message).toMatch(/RecoveryNotReady/);
    const other = privateKeyToAccount(generatePrivateKey()).address;
    expect(expectError(await call("POST", `/v1/accounts/${account.id}/complete_recovery`, { key, json: { newOwnerAddress: other, policy: policy.id } }), 400).message).toMatch(/is to/);

    await afterRecoveryPeriod(chainId);
    const completed = await call("POST", `/v1/accounts/${account.id}/complete_recovery`, { key, form: { newOwnerAddress: newOwner, policy: policy.id } });
    expect(completed.status, JSON.stringify(completed.body)).toBe(200);
    expect((await waitForLanding(key, completed.body.id)).response.status).toBe(1);
    expect(await read(chainId, account.address, "owner")).toBe(newOwner);
    expect((await call("POST", `/v1/accounts/${account.id}/sync`, { key })).body).toMatchObject({ deployed: true, ownerAddress: newOwner, custodial: false });

    // An account without the service as guardian cannot be recovered through the API.
    const { body: plain } = await call("POST", "/v1/accounts", { key, json: { chainId } });
    await call("POST", `/v1/accounts/${plain.id}/deploy`, { key, json: { policy: policy.id } });
    expect(expectError(await call("POST", `/v1/accounts/${plain.id}/start_recovery`, { key, json: { newOwnerAddress: newOwner, policy: policy.id } }), 400).message).toMatch(/not a guardian/);
    // Nor one created without it and not deployed yet.
    const { body: plainUndeployed } = await call("POST", "/v1/accounts", { key, json: { chainId } });
    expect(expectError(await call("POST", `/v1/accounts/${plainUndeployed.id}/start_recovery`, { key, json: { newOwnerAddress: newOwner, policy: policy.id } }), 400).message).toMatch(
      /not a guardian.*defaultGuardian=true/,
    );
  }, 90_000);

  it("asks for a strict majority: with a second guardian the service alone cannot complete", async () => {
    const key = project.keys.live.secret;
    const chainId = 31339;
    const policy = await selfPolicy(key, chainId);
    const { body: account } = await call("POST", "/v1/accounts", { key, json: { chainId, defaultGuardian: true } });
    const friend = privateKeyToAccount(generatePrivateKey());
    // The owner (custodial: the service signs) adds a second guardian with the account's first operation.
    const addFriend = encodeFunctionData({ abi: smartAccountAbi, functionName: "addGuardian", args: [friend.address] });
    const added = await call("POST", "/v1/transaction_intents", { key, json: { chainId, account: account.id, policy: policy.id, interactions: [{ to: account.address, data: addFriend }] } });
    expect(added.status, JSON.stringify(added.body)).toBe(200);
    expect((await waitForLanding(key, added.body.id)).response.status).toBe(1);
    expect(await read<Address[]>(chainId, account.address, "getGuardians")).toHaveLength(2);

    const newOwner = privateKeyToAccount(generatePrivateKey()).address;
    const started = await call("POST", `/v1/accounts/${account.id}/start_recovery`, { key, json: { newOwnerAddress: newOwner, policy: policy.id } });
    expect((await waitForLanding(key, started.body.id)).response.status).toBe(1);
    expect((await read<[Address, bigint, number]>(chainId, account.address, "getRecovery"))[2]).toBe(2);
    await afterRecoveryPeriod(chainId);

    const alone = expectError(await call("POST", `/v1/accounts/${account.id}/complete_recovery`, { key, json: { newOwnerAddress: newOwner, policy: policy.id } }), 400);
    expect(alone.message).toMatch(/needs signatures of 2 guardians \(a strict majority\); there are 1/);
    // The service's own signature passed back counts once.
    const digest = await read<Hex>(chainId, account.address, "recoveryHash");
    const ours = await serviceAccount("guardian").sign({ hash: digest });
    expectError(await call("POST", `/v1/accounts/${account.id}/complete_recovery`, { key, json: { newOwnerAddress: newOwner, policy: policy.id, signatures: [ours] } }), 400);

    const completed = await call("POST", `/v1/accounts/${account.id}/complete_recovery`, {
      key,
      json: { newOwnerAddress: newOwner, policy: policy.id, signatures: [await friend.sign({ hash: digest })] },
    });
    expect(completed.status, JSON.stringify(completed.body)).toBe(200);
    expect((await waitForLanding(key, completed.body.id)).response.status).toBe(1);
    expect(await read(chainId, account.address, "owner")).toBe(newOwner);
  }, 90_000);

  it("loses a pending recovery to an ownership change", async () => {
    const key = project.keys.test.secret;
    const chainId = 31337;
    const policy = await selfPolicy(key, chainId);
    const { body: account } = await call("POST", "/v1/accounts", { key, json: { chainId, defaultGuardian: true } });
    const started = await call("POST", `/v1/accounts/${account.id}/start_recovery`, { key, json: { newOwnerAddress: privateKeyToAccount(generatePrivateKey()).address, policy: policy.id } });
    expect((await waitForLanding(key, started.body.id)).response.status).toBe(1);

    const transferee = await fundedWallet(chainId);
    const requested = await call("POST", `/v1/accounts/${account.id}/request_transfer_ownership`, { key, json: { newOwnerAddress: transferee.account.address, policy: policy.id } });
    expect((await waitForLanding(key, requested.body.id)).response.status).toBe(1);
    await mined(chainId, await transferee.writeContract({ address: account.address, abi: smartAccountAbi, functionName: "acceptOwnership", chain: transferee.chain, account: transferee.account }));

    expect(await read(chainId, account.address, "getRecovery")).toEqual(["0x0000000000000000000000000000000000000000", 0n, 0]);
    const stale = await call("POST", `/v1/accounts/${account.id}/complete_recovery`, { key, json: { newOwnerAddress: transferee.account.address, policy: policy.id } });
    expect(expectError(stale, 400).message).toMatch(/no recovery in progress/);
  }, 90_000);

  it("recovers an undeployed account with an external owner (who lost the key): the guardian's op deploys it with the service as guardian", async () => {
    const key = project.keys.live.secret;
    const chainId = 31339;
    const policy = await selfPolicy(key, chainId);
    const lost = privateKeyToAccount(generatePrivateKey());
    const { body: account } = await call("POST", "/v1/accounts", { key, json: { chainId, externalOwnerAddress: lost.address, defaultGuardian: true } });
    // The address is the factory's for this owner, salt and the service as guardian.
    const guardian = serviceAccount("guardian").address;
    const factory = { address: serviceDeployment().accountFactory, abi: accountFactoryAbi } as const;
    const predicted = await clientOf(chainId).readContract({ ...factory, functionName: "getAddressWithGuardian", args: [lost.address, guardian, accountSalt(account.player.id)] });
    expect(account.address).toBe(predicted);
    expect(await clientOf(chainId).getCode({ address: account.address })).toBeUndefined();

    const newOwner = privateKeyToAccount(generatePrivateKey()).address;
    const started = await call("POST", `/v1/accounts/${account.id}/start_recovery`, { key, json: { newOwnerAddress: newOwner, policy: policy.id } });
    expect(started.status, JSON.stringify(started.body)).toBe(200);
    // One operation, signed by the service as guardian: the factory call and startRecovery itself, nothing for the owner to sign.
    expect(started.body.nextAction).toBeUndefined();
    const [intent] = await (await getDb()).select().from(transactionIntents).where(eq(transactionIntents.id, started.body.id));
    const op = intent!.userOperation;
    expect(decodeFunctionData({ abi: accountFactoryAbi, data: slice(op.initCode as Hex, 20) })).toMatchObject({ functionName: "createAccountWithGuardian", args: [lost.address, guardian, accountSalt(account.player.id)] });
    expect(decodeFunctionData({ abi: smartAccountAbi, data: op.callData as Hex })).toMatchObject({ functionName: "startRecovery", args: [newOwner] });
    expect((await waitForLanding(key, started.body.id)).response.status).toBe(1);
    expect(await read(chainId, account.address, "owner")).toBe(lost.address);
    expect(await read(chainId, account.address, "getGuardians")).toEqual([guardian]);
    expect((await read<[Address, bigint, number]>(chainId, account.address, "getRecovery"))[0]).toBe(newOwner);

    await afterRecoveryPeriod(chainId);
    const completed = await call("POST", `/v1/accounts/${account.id}/complete_recovery`, { key, json: { newOwnerAddress: newOwner, policy: policy.id } });
    expect(completed.status, JSON.stringify(completed.body)).toBe(200);
    expect((await waitForLanding(key, completed.body.id)).response.status).toBe(1);
    expect(await read(chainId, account.address, "owner")).toBe(newOwner);
    expect((await call("POST", `/v1/accounts/${account.id}/sync`, { key })).body).toMatchObject({ deployed: true, ownerAddress: newOwner });
  }, 90_000);

  it("does not wait behind a first transaction the owner who lost the key never signs: start_recovery cancels it and deploys the account itself", async () => {
    const key = project.keys.test.secret;
    const policy = await selfPolicy(key, 31337);
    const lost = privateKeyToAccount(generatePrivateKey());
    const { body: account } = await call("POST", "/v1/accounts", { key, json: { chainId: 31337, externalOwnerAddress: lost.address, defaultGuardian: true } });
    const noop = encodeFunctionData({ abi: smartAccountAbi, functionName: "addGuardian", args: [privateKeyToAccount(generatePrivateKey()).address] });
    const unsigned = await call("POST", "/v1/transaction_intents", { key, json: { chainId: 31337, account: account.id, policy: policy.id, interactions: [{ to: account.address, data: noop }] } });
    expect(unsigned.body.nextAction, JSON.stringify(unsigned.body)).toMatchObject({ type: "sign_with_wallet" });

    const newOwner = privateKeyToAccount(generatePrivateKey()).address;
    const started = await call("POST", `/v1/accounts/${account.id}/start_recovery`, { key, json: { newOwnerAddress: newOwner, policy: policy.id } });
    expect(started.status, JSON.stringify(started.body)).toBe(200);
    expect((await waitForLanding(key, started.body.id)).response.status).toBe(1);
    expect((await read<[Address, bigint, number]>(31337, account.address, "getRecovery"))[0]).toBe(newOwner);
    const [first] = await (await getDb()).select().from(transactionIntents).where(eq(transactionIntents.id, unsigned.body.id));
    expect(first).toMatchObject({ status: "cancelled", error: expect.stringMatching(/start_recovery/) });
  }, 60_000);

  it("deploys an external owner's account with the service as guardian through its first transaction, whose calls are only the owner's", async () => {
    const key = project.keys.test.secret;
    const policy = await selfPolicy(key, 31337);
    const owner = privateKeyToAccount(generatePrivateKey());
    const { body: account } = await call("POST", "/v1/accounts", { key, json: { chainId: 31337, externalOwnerAddress: owner.address, defaultGuardian: true } });
    const friend = privateKeyToAccount(generatePrivateKey()).address;
    const addFriend = encodeFunctionData({ abi: smartAccountAbi, functionName: "addGuardian", args: [friend] });
    const res = await call("POST", "/v1/transaction_intents", { key, json: { chainId: 31337, account: account.id, policy: policy.id, interactions: [{ to: account.address, data: addFriend }] } });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    const [intent] = await (await getDb()).select().from(transactionIntents).where(eq(transactionIntents.id, res.body.id));
    expect(decodeFunctionData({ abi: smartAccountAbi, data: intent!.userOperation.callData as Hex })).toMatchObject({ functionName: "execute", args: [account.address, 0n, addFriend] });
    const signature = await owner.signMessage({ message: { raw: res.body.nextAction.payload.userOperationHash } });
    await call("POST", `/v1/transaction_intents/${res.body.id}/signature`, { key, json: { signature } });
    expect((await waitForLanding(key, res.body.id)).response.status).toBe(1);
    expect(await read(31337, account.address, "getGuardians")).toEqual([serviceAccount("guardian").address, friend]);
  }, 60_000);
});
