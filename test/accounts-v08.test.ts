// Upgradeable_v08 accounts (SmartAccountV8 proxies on EntryPoint v0.8) through the /v1 API, on the real anvil 31337.
import { eq } from "drizzle-orm";
import { parseEther, type Address, type Hex } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { beforeAll, describe, expect, it, vi } from "vitest";
import { smartAccountV8Abi } from "@/contracts/artifacts";
import { counterfactualAddressV08 } from "@/lib/chain/accounts-v08";
import { accountSalt } from "@/lib/chain/accounts";
import { serviceDeployment } from "@/lib/chain/contracts";
import { serviceAccount } from "@/lib/keys/service-keys";
import { getDb } from "@/lib/db/client";
import { sponsorshipHolds, transactionIntents } from "@/lib/db/schema";
import type { ProjectWithKeys } from "@/lib/projects/service";
import { openSigningLink, submitLinkSignature } from "@/lib/signing/service";
import { call, expectError, newProject, waitForLanding } from "./helpers/api";
import { clientOf } from "./helpers/chain";
import { setBalance } from "@/lib/chain/testing";
import { chainOf } from "./helpers/chain";
import { publicClient } from "@/lib/chain/clients";

let project: ProjectWithKeys;
let key: string;
const client = clientOf(31337);

async function policyFor(rules: ("account_functions" | "contract_functions")[] = ["account_functions"]) {
  const { body: policy } = await call("POST", "/v1/policies", { key, json: { name: "v08", chainId: 31337, strategy: { sponsorSchema: "pay_for_user" } } });
  for (const type of rules) {
    await call("POST", "/v1/policy_rules", { key, json: { policy: policy.id, type, ...(type === "contract_functions" ? { wildcard: true } : {}) } });
  }
  return policy.id as string;
}

beforeAll(async () => {
  project = await newProject("accounts v0.8");
  key = project.keys.test.secret;
});

const pay = (to: Address, value = "0") => ({ to, value });

describe("Upgradeable_v08 accounts", () => {
  it("is created at its AccountFactoryV8 CREATE2 address and answered as Upgradeable_v08", async () => {
    const { body: account, status } = await call("POST", "/v1/accounts", { key, json: { chainId: 31337, accountType: "UpgradeableV8" } });
    expect(status, JSON.stringify(account)).toBe(200);
    expect(account).toMatchObject({ accountType: "Upgradeable_v08", custodial: true, deployed: false });
    expect(account.address).toBe(counterfactualAddressV08(account.ownerAddress, accountSalt(account.player.id)));
    expect(account.address).not.toBe(account.ownerAddress);
    // The response name is accepted back, form-encoded too.
    const { body: again } = await call("POST", "/v1/accounts", { key, form: { chainId: 31337, accountType: "Upgradeable_v08" } });
    expect(again.accountType).toBe("Upgradeable_v08");
  });

  it("a custodial sponsored intent deploys the account and lands; its hold is settled at the actual gas cost", async () => {
    const policy = await policyFor(["account_functions", "contract_functions"]);
    const { body: account } = await call("POST", "/v1/accounts", { key, json: { chainId: 31337, accountType: "UpgradeableV8" } });
    const recipient = privateKeyToAccount(generatePrivateKey()).address;
    const created = await call("POST", "/v1/transaction_intents", {
      key,
      json: { chainId: 31337, account: account.id, policy, interactions: [pay(recipient), pay(account.ownerAddress)] },
    });
    expect(created.status, JSON.stringify(created.body)).toBe(200);
    expect(created.body.abstractionType).toBe("accountAbstractionV8");
    const op = created.body.userOperation;
    expect(op).toMatchObject({ entryPointVersion: "0.8", sender: account.address, factory: serviceDeployment().accountFactoryV08, paymaster: serviceDeployment().paymasterV08 });
    expect(op.initCode).toBeUndefined();
    const landed = await waitForLanding(key, created.body.id);
    expect(landed.response.status).toBe(1);
    expect(landed.response.to.toLowerCase()).toBe(serviceDeployment().entryPointV08.toLowerCase());
    expect(await client.readContract({ address: account.address, abi: smartAccountV8Abi, functionName: "owner" })).toBe(account.ownerAddress);

    const db = await getDb();
    const [hold] = await db.select().from(sponsorshipHolds).where(eq(sponsorshipHolds.intentId, created.body.id));
    expect(hold).toMatchObject({ status: "settled", settledAmount: landed.response.gasFee });
    const [row] = await db.select().from(transactionIntents).where(eq(transactionIntents.id, created.body.id));
    expect(BigInt(hold!.amount)).toBe(BigInt(row!.maxCost!));

    // The second intent: no factory; synced, the account says deployed.
    const second = await call("POST", "/v1/transaction_intents", { key, json: { chainId: 31337, account: account.id, policy, interactions: [pay(recipient)] } });
    expect(second.body.userOperation.factory).toBeUndefined();
    expect((await waitForLanding(key, second.body.id)).response.status).toBe(1);
    expect((await call("POST", `/v1/accounts/${account.id}/sync`, { key })).body).toMatchObject({ deployed: true, ownerAddress: account.ownerAddress });
  }, 60_000);

  it("an intent whose build read the account without code (its deployment landed again meanwhile) is built again without a factory, not refused AA10 (nor AA20 the other way)", async () => {
    const policy = await policyFor(["account_functions", "contract_functions"]);
    const { body: account } = await call("POST", "/v1/accounts", { key, json: { chainId: 31337, accountType: "UpgradeableV8" } });
    const first = await call("POST", "/v1/transaction_intents", { key, json: { chainId: 31337, account: account.id, policy, interactions: [pay(account.ownerAddress)] } });
    expect(first.status, JSON.stringify(first.body)).toBe(200);
    expect((await waitForLanding(key, first.body.id)).response.status).toBe(1);
    expect((await call("POST", `/v1/accounts/${account.id}/sync`, { key })).body).toMatchObject({ deployed: true });
    // The next build's reads of the account's code answer as the chain was before the deployment (a reorg had taken
    // it, and it landed again meanwhile); the simulation runs where the account exists: its factory is refused (AA10).
    const getCode = vi.spyOn(publicClient(chainOf(31337)), "getCode").mockResolvedValueOnce(undefined).mockResolvedValueOnce(undefined);
    try {
      const second = await call("POST", "/v1/transaction_intents", { key, json: { chainId: 31337, account: account.id, policy, interactions: [pay(account.ownerAddress)] } });
      expect(second.status, JSON.stringify(second.body)).toBe(200);
      expect(getCode).toHaveBeenCalled();
      expect(second.body.userOperation.factory).toBeUndefined();
      expect((await waitForLanding(key, second.body.id)).response.status).toBe(1);
    } finally {
      getCode.mockRestore();
    }
    // The reverse: the first read finds the account, the next one not (a reorg took the deployment in between): the
    // estimate has no factory to deploy it with (AA20). Built again from a fresh read (the chain has it here).
    const client = publicClient(chainOf(31337));
    const real = client.getCode.bind(client);
    const reorged = vi.spyOn(client, "getCode").mockImplementationOnce(real).mockResolvedValueOnce(undefined);
    try {
      const third = await call("POST", "/v1/transaction_intents", { key, json: { chainId: 31337, account: account.id, policy, interactions: [pay(account.ownerAddress)] } });
      expect(third.status, JSON.stringify(third.body)).toBe(200);
      expect(reorged.mock.calls.length).toBeGreaterThan(2); // read again: built twice
      expect(third.body.userOperation.factory).toBeUndefined();
      expect((await waitForLanding(key, third.body.id)).response.status).toBe(1);
    } finally {
      reorged.mockRestore();
    }
  }, 60_000);

  it("an unsponsored intent is paid from the account's own balance", async () => {
    const { body: account } = await call("POST", "/v1/accounts", { key, json: { chainId: 31337, accountType: "UpgradeableV8" } });
    await setBalance(chainOf(31337), account.address, parseEther("1"));
    const recipient = privateKeyToAccount(generatePrivateKey()).address;
    const created = await call("POST", "/v1/transaction_intents", { key, json: { chainId: 31337, account: account.id, interactions: [pay(recipient, "1000")] } });
    expect(created.status, JSON.stringify(created.body)).toBe(200);
    expect(created.body.userOperation.paymaster).toBeUndefined();
    expect((await waitForLanding(key, created.body.id)).response.status).toBe(1);
    expect(await client.getBalance({ address: recipient })).toBe(1000n);
  }, 60_000);

  it("an owner-held account's intent waits for the owner's raw signature of the EIP-712 userOpHash, then lands", async () => {
    const policy = await policyFor(["account_functions", "contract_functions"]);
    const owner = privateKeyToAccount(generatePrivateKey());
    const { body: account } = await call("POST", "/v1/accounts", { key, json: { chainId: 31337, accountType: "UpgradeableV8", externalOwnerAddress: owner.address } });
    expect(account.custodial).toBe(false);
    const created = await call("POST", "/v1/transaction_intents", { key, json: { chainId: 31337, account: account.id, policy, interactions: [pay(owner.address)] } });
    expect(created.status, JSON.stringify(created.body)).toBe(200);
    const { nextAction, userOperationHash } = created.body;
    expect(nextAction).toMatchObject({ type: "sign_with_wallet", payload: { userOperationHash, signWith: "typed_data", typedData: { primaryType: "PackedUserOperation" } } });
    // A personal_sign recovers to someone else: refused with how to sign.
    const personal = await owner.signMessage({ message: { raw: userOperationHash } });
    expect(expectError(await call("POST", `/v1/transaction_intents/${created.body.id}/signature`, { key, json: { signature: personal } }), 400).message).toMatch(/eth_signTypedData_v4/);
    // The wallet's eth_signTypedData_v4 of the typed data is the raw signature of the hash.
    const typed = nextAction.payload.typedData;
    const signature = await owner.signTypedData({ ...typed, message: { ...typed.message, nonce: BigInt(typed.message.nonce), preVerificationGas: BigInt(typed.message.preVerificationGas) } });
    expect(signature).toBe(await owner.sign({ hash: userOperationHash as Hex }));
    // The signing page shows the same typed data for the wallet, and takes the signature as the API does.
    const token = new URL(nextAction.payload.signingUrl).searchParams.get("t")!;
    const page = await openSigningLink(await getDb(), token, created.body.id);
    expect(page.state === "awaiting" && page.view.typedData).toEqual(typed);
    expect(await submitLinkSignature(await getDb(), token, created.body.id, { signature })).toMatchObject({ final: false });
    expect((await waitForLanding(key, created.body.id)).response.status).toBe(1);
  }, 60_000);

  it("registers a session key, lets it sign an intent, and revokes it", async () => {
    const policy = await policyFor(["account_functions", "contract_functions"]);
    const { body: account } = await call("POST", "/v1/accounts", { key, json: { chainId: 31337, accountType: "UpgradeableV8" } });
    const sessionKey = privateKeyToAccount(generatePrivateKey());
    const now = Math.floor(Date.now() / 1000);
    const registered = await call("POST", "/v1/sessions", {
      key,
      json: { player: account.player.id, chainId: 31337, address: sessionKey.address, validAfter: now - 3600, validUntil: now + 86_400, policy, limit: 5 },
    });
    expect(registered.status, JSON.stringify(registered.body)).toBe(200);
    const registering = registered.body.nextAction ? null : registered.body.transactionIntents?.[0]?.id;
    if (registering) expect((await waitForLanding(key, registering)).response.status).toBe(1);

    const recipient = privateKeyToAccount(generatePrivateKey()).address;
    const created = await call("POST", "/v1/transaction_intents", {
      key,
      json: { chainId: 31337, account: account.id, policy, session: registered.body.id, interactions: [pay(recipient)] },
    });
    expect(created.status, JSON.stringify(created.body)).toBe(200);
    expect(created.body.nextAction.type).toBe("sign_with_wallet");
    const signature = await sessionKey.sign({ hash: created.body.userOperationHash });
    const signed = await call("POST", `/v1/transaction_intents/${created.body.id}/signature`, { key, json: { signature } });
    expect(signed.status, JSON.stringify(signed.body)).toBe(200);
    expect((await waitForLanding(key, created.body.id)).response.status).toBe(1);

    const revoked = await call("POST", "/v1/sessions/revoke", { key, json: { player: account.player.id, chainId: 31337, address: sessionKey.address, policy } });
    expect(revoked.status, JSON.stringify(revoked.body)).toBe(200);
    // The latest intent of the session first: the revocation's.
    const revoking = revoked.body.transactionIntents?.[0]?.id;
    expect((await waitForLanding(key, revoking)).response.status).toBe(1);
    const state = await client.readContract({ address: account.address, abi: smartAccountV8Abi, functionName: "getSessionKey", args: [sessionKey.address] });
    expect(state[4]).toBe(false);
  }, 90_000);

  it("transfers ownership in two steps through sponsored self-calls", async () => {
    const policy = await policyFor();
    const { body: account } = await call("POST", "/v1/accounts", { key, json: { chainId: 31337, accountType: "UpgradeableV8" } });
    const newOwner = privateKeyToAccount(generatePrivateKey()).address;
    const requested = await call("POST", `/v1/accounts/${account.id}/request_transfer_ownership`, { key, json: { newOwnerAddress: newOwner, policy } });
    expect(requested.status, JSON.stringify(requested.body)).toBe(200);
    expect((await waitForLanding(key, requested.body.id)).response.status).toBe(1);
    expect((await call("POST", `/v1/accounts/${account.id}/sync`, { key })).body).toMatchObject({ deployed: true, pendingOwnerAddress: newOwner });
  }, 60_000);

  it("the service as guardian starts a recovery: its guardian-signed operation also deploys the account", async () => {
    const policy = await policyFor();
    const { body: account } = await call("POST", "/v1/accounts", { key, json: { chainId: 31337, accountType: "UpgradeableV8", defaultGuardian: true } });
    expect(account.address).toBe(counterfactualAddressV08(account.ownerAddress, accountSalt(account.player.id), serviceAccount("guardian").address));
    const newOwner = privateKeyToAccount(generatePrivateKey()).address;
    const started = await call("POST", `/v1/accounts/${account.id}/start_recovery`, { key, json: { newOwnerAddress: newOwner, policy } });
    expect(started.status, JSON.stringify(started.body)).toBe(200);
    expect(started.body.userOperation.factory).toBe(serviceDeployment().accountFactoryV08);
    expect((await waitForLanding(key, started.body.id)).response.status).toBe(1);
    const [pending] = await client.readContract({ address: account.address, abi: smartAccountV8Abi, functionName: "getRecovery" });
    expect(pending).toBe(newOwner);
  }, 60_000);

  it("concurrent first intents: one deploys the account, the others run after it", async () => {
    const policy = await policyFor(["account_functions", "contract_functions"]);
    const { body: account } = await call("POST", "/v1/accounts", { key, json: { chainId: 31337, accountType: "UpgradeableV8" } });
    const results = await Promise.all(
      [1, 2, 3].map(() => call("POST", "/v1/transaction_intents", { key, json: { chainId: 31337, account: account.id, policy, interactions: [pay(account.ownerAddress)] } })),
    );
    for (const r of results) expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(results.filter((r) => r.body.userOperation.factory).length).toBe(1);
    for (const r of results) expect((await waitForLanding(key, r.body.id)).response.status).toBe(1);
  }, 90_000);

  it("signs typed data the account's isValidSignature accepts (ERC-6492 before deployment)", async () => {
    const { body: account } = await call("POST", "/v1/accounts", { key, json: { chainId: 31337, accountType: "UpgradeableV8" } });
    const typed = { domain: { name: "Game", version: "1", chainId: 31337 }, types: { Score: [{ name: "points", type: "uint256" }] }, primaryType: "Score", value: { points: 7 } };
    const { body } = await call("POST", `/v1/accounts/${account.id}/sign_payload`, { key, json: typed });
    expect(body.object).toBe("signature");
    const valid = await client.verifyTypedData({ address: account.address, domain: typed.domain, types: typed.types, primaryType: "Score", message: { points: 7n }, signature: body.signature });
    expect(valid).toBe(true);
  }, 30_000);
});
