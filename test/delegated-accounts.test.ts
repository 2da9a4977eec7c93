// Delegated_v08 accounts (an EOA delegating to DelegatedAccountV8 by EIP-7702, EntryPoint v0.8) through the /v1 API,
// on the real anvil 31337: the first sponsored intent delegates and executes in one type-4 bundle.
import { parseEther, type Address, type Hex } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { beforeAll, describe, expect, it, vi } from "vitest";
import { delegatedAccountV8Abi } from "@/contracts/artifacts";
import { serviceDeployment } from "@/lib/chain/contracts";
import { walletClient } from "@/lib/chain/clients";
import { delegationCode } from "@/lib/chain/eip7702";
import { setBalance } from "@/lib/chain/testing";
import type { ProjectWithKeys } from "@/lib/projects/service";
import { call, expectError, newProject, waitForLanding } from "./helpers/api";
import { chainOf, clientOf } from "./helpers/chain";

let project: ProjectWithKeys;
let key: string;
let policy: string;
const client = clientOf(31337);
const chain = chainOf(31337);
const implementation = () => serviceDeployment().delegatedAccountV08;

beforeAll(async () => {
  project = await newProject("delegated accounts");
  key = project.keys.test.secret;
  const { body } = await call("POST", "/v1/policies", { key, json: { name: "7702", chainId: 31337, strategy: { sponsorSchema: "pay_for_user" } } });
  policy = body.id;
  await call("POST", "/v1/policy_rules", { key, json: { policy, type: "account_functions" } });
  await call("POST", "/v1/policy_rules", { key, json: { policy, type: "contract_functions", wildcard: true } });
});

const pay = (to: Address, value = "0") => ({ to, value });
/** viem's SignedAuthorization as JSON (its deprecated bigint `v` left out, as JSON.stringify cannot write it). */
const asJson = ({ v: _v, ...authorization }: { v?: bigint } & Record<string, unknown>) => authorization;
const stranger = () => privateKeyToAccount(generatePrivateKey()).address;

describe("Delegated_v08 custodial accounts", () => {
  it("the account is the service-held EOA; the first sponsored intent delegates it and runs a batch, the next carries no authorization", async () => {
    const { body: account, status } = await call("POST", "/v1/accounts", { key, json: { chainId: 31337, accountType: "DelegatedV8" } });
    expect(status, JSON.stringify(account)).toBe(200);
    expect(account).toMatchObject({ accountType: "Delegated_v08", custodial: true, deployed: false, delegation: { status: "none", address: null, implementation: implementation() } });
    expect(account.address).toBe(account.ownerAddress);

    const [a, b] = [stranger(), stranger()];
    await setBalance(chain, account.address, parseEther("1"));
    const first = await call("POST", "/v1/transaction_intents", { key, json: { chainId: 31337, account: account.id, policy, interactions: [pay(a, "5"), pay(b, "7")] } });
    expect(first.status, JSON.stringify(first.body)).toBe(200);
    expect(first.body.userOperation).toMatchObject({ entryPointVersion: "0.8", sender: account.address, factory: "0x7702", eip7702Auth: { address: implementation(), chainId: "0x7a69", nonce: "0x0" } });
    const landed = await waitForLanding(key, first.body.id);
    expect(landed.response.status).toBe(1);
    expect((await client.getTransaction({ hash: landed.response.transactionHash })).type).toBe("eip7702");
    expect(await client.getCode({ address: account.address })).toBe(delegationCode(implementation()).toLowerCase());
    expect([await client.getBalance({ address: a }), await client.getBalance({ address: b })]).toEqual([5n, 7n]);

    // The landing records the delegation; sync reads it again from the chain.
    expect((await call("GET", `/v1/accounts/${account.id}`, { key })).body).toMatchObject({ deployed: true, delegation: { status: "ours" } });
    const synced = await call("POST", `/v1/accounts/${account.id}/sync`, { key });
    expect(synced.body).toMatchObject({ deployed: true, delegation: { status: "ours", address: implementation() } });

    const second = await call("POST", "/v1/transaction_intents", { key, json: { chainId: 31337, account: account.id, policy, interactions: [pay(a, "1")] } });
    expect(second.body.userOperation.factory).toBeUndefined();
    expect(second.body.userOperation.eip7702Auth).toBeUndefined();
    expect((await waitForLanding(key, second.body.id)).response.status).toBe(1);
    expect(await client.getBalance({ address: a })).toBe(6n);

    // Its key always rules: no ownership transfer or guardians.
    expect(expectError(await call("POST", `/v1/accounts/${account.id}/request_transfer_ownership`, { key, json: { newOwnerAddress: a, policy } }), 400).message).toMatch(/EOA/);
    expectError(await call("POST", "/v1/accounts", { key, json: { chainId: 31337, accountType: "DelegatedV8", defaultGuardian: true } }), 400);
  }, 90_000);

  it("concurrent first intents: one delegates the EOA, the others run after it", async () => {
    const { body: account } = await call("POST", "/v1/accounts", { key, json: { chainId: 31337, accountType: "DelegatedV8" } });
    const results = await Promise.all(
      [1, 2, 3].map(() => call("POST", "/v1/transaction_intents", { key, json: { chainId: 31337, account: account.id, policy, interactions: [pay(stranger())] } })),
    );
    for (const r of results) expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(results.filter((r) => r.body.userOperation.eip7702Auth).length).toBe(1);
    for (const r of results) expect((await waitForLanding(key, r.body.id)).response.status).toBe(1);
  }, 90_000);

  it("a session key registered on the delegated EOA signs an intent", async () => {
    const { body: account } = await call("POST", "/v1/accounts", { key, json: { chainId: 31337, accountType: "DelegatedV8" } });
    const sessionKey = privateKeyToAccount(generatePrivateKey());
    const now = Number((await client.getBlock()).timestamp);
    const registered = await call("POST", "/v1/sessions", {
      key,
      json: { player: account.player.id, chainId: 31337, address: sessionKey.address, validAfter: now - 60, validUntil: now + 86_400, policy, limit: 3 },
    });
    expect(registered.status, JSON.stringify(registered.body)).toBe(200);
    expect((await waitForLanding(key, registered.body.transactionIntents[0].id)).response.status).toBe(1);
    const onChain = await client.readContract({ address: account.address, abi: delegatedAccountV8Abi, functionName: "getSessionKey", args: [sessionKey.address] });
    expect(onChain[4]).toBe(true);

    const recipient = stranger();
    const created = await call("POST", "/v1/transaction_intents", { key, json: { chainId: 31337, session: registered.body.id, policy, interactions: [pay(recipient)] } });
    expect(created.status, JSON.stringify(created.body)).toBe(200);
    const signature = await sessionKey.sign({ hash: created.body.userOperationHash });
    const signed = await call("POST", `/v1/transaction_intents/${created.body.id}/signature`, { key, json: { signature } });
    expect(signed.status, JSON.stringify(signed.body)).toBe(200);
    expect((await waitForLanding(key, created.body.id)).response.status).toBe(1);
  }, 90_000);
});

describe("Delegated_v08 owner-held accounts", () => {
  it("the first intent asks for the owner's authorization (implementation, chain, nonce); signed, it lands", async () => {
    const owner = privateKeyToAccount(generatePrivateKey());
    const { body: account } = await call("POST", "/v1/accounts", { key, json: { chainId: 31337, accountType: "DelegatedV8", externalOwnerAddress: owner.address } });
    expect(account).toMatchObject({ address: owner.address, custodial: false, delegation: { status: "none" } });

    const created = await call("POST", "/v1/transaction_intents", { key, json: { chainId: 31337, account: account.id, policy, interactions: [pay(stranger())] } });
    expect(created.status, JSON.stringify(created.body)).toBe(200);
    const { nextAction, userOperationHash } = created.body;
    expect(nextAction).toMatchObject({
      type: "sign_authorization",
      payload: { userOperationHash, signWith: "typed_data", authorization: { contractAddress: implementation(), chainId: 31337, nonce: 0 } },
    });
    const signature = await owner.sign({ hash: userOperationHash as Hex });
    // The op alone is not enough while the EOA does not delegate yet.
    expect(expectError(await call("POST", `/v1/transaction_intents/${created.body.id}/signature`, { key, json: { signature } }), 400).message).toMatch(/signedAuthorization/);
    // An authorization with another nonce (or to another implementation) is refused, saying why.
    const wrongNonce = await owner.signAuthorization({ address: implementation(), chainId: 31337, nonce: 1 });
    expect(
      expectError(await call("POST", `/v1/transaction_intents/${created.body.id}/signature`, { key, json: { signature, signedAuthorization: asJson(wrongNonce) } }), 400).message,
    ).toMatch(/nonce 1, but the account's nonce is 0/);
    const elsewhere = await owner.signAuthorization({ address: serviceDeployment().simple7702Account, chainId: 31337, nonce: 0 });
    expectError(await call("POST", `/v1/transaction_intents/${created.body.id}/signature`, { key, json: { signature, signedAuthorization: asJson(elsewhere) } }), 400);

    const authorization = await owner.signAuthorization({ address: implementation(), chainId: 31337, nonce: 0 });
    // Form-encoded, as a server-side SDK may send it.
    const signed = await call("POST", `/v1/transaction_intents/${created.body.id}/signature`, {
      key,
      form: { signature, signedAuthorization: { contractAddress: authorization.address, chainId: 31337, nonce: 0, r: authorization.r, s: authorization.s, yParity: authorization.yParity } },
    });
    expect(signed.status, JSON.stringify(signed.body)).toBe(200);
    expect((await waitForLanding(key, created.body.id)).response.status).toBe(1);
    expect(await client.getCode({ address: owner.address })).toBe(delegationCode(implementation()).toLowerCase());
  }, 90_000);

  it("takes signedAuthorization with the intent itself; refuses one with the wrong nonce", async () => {
    const owner = privateKeyToAccount(generatePrivateKey());
    const { body: account } = await call("POST", "/v1/accounts", { key, json: { chainId: 31337, accountType: "DelegatedV8", externalOwnerAddress: owner.address } });
    const wrong = await owner.signAuthorization({ address: implementation(), chainId: 31337, nonce: 5 });
    const refused = await call("POST", "/v1/transaction_intents", { key, json: { chainId: 31337, account: account.id, policy, interactions: [pay(stranger())], signedAuthorization: asJson(wrong) } });
    expect(expectError(refused, 400).message).toMatch(/nonce 5, but the account's nonce is 0/);
    const otherChain = await owner.signAuthorization({ address: implementation(), chainId: 1, nonce: 0 });
    expect(
      expectError(await call("POST", "/v1/transaction_intents", { key, json: { chainId: 31337, account: account.id, policy, interactions: [pay(stranger())], signedAuthorization: asJson(otherChain) } }), 400).message,
    ).toMatch(/chain 1/);

    const authorization = await owner.signAuthorization({ address: implementation(), chainId: 31337, nonce: 0 });
    const created = await call("POST", "/v1/transaction_intents", { key, json: { chainId: 31337, account: account.id, policy, interactions: [pay(stranger())], signedAuthorization: asJson(authorization) } });
    expect(created.status, JSON.stringify(created.body)).toBe(200);
    expect(created.body.nextAction.type).toBe("sign_with_wallet");
    const signed = await call("POST", `/v1/transaction_intents/${created.body.id}/signature`, { key, json: { signature: await owner.sign({ hash: created.body.userOperationHash }) } });
    expect(signed.status, JSON.stringify(signed.body)).toBe(200);
    expect((await waitForLanding(key, created.body.id)).response.status).toBe(1);
  }, 90_000);

  it("an EOA delegated elsewhere is reported, and its intents refused rather than re-delegated", async () => {
    const owner = privateKeyToAccount(generatePrivateKey());
    await setBalance(chain, owner.address, parseEther("1"));
    // The owner delegates to another implementation on their own (a type-4 transaction they send).
    const wallet = walletClient(chain, owner);
    const elsewhere = await wallet.signAuthorization({ account: owner, contractAddress: serviceDeployment().simple7702Account, executor: "self" });
    await client.waitForTransactionReceipt({ hash: await wallet.sendTransaction({ account: owner, to: owner.address, authorizationList: [elsewhere], chain: null }) });

    const { body: account } = await call("POST", "/v1/accounts", { key, json: { chainId: 31337, accountType: "DelegatedV8", externalOwnerAddress: owner.address } });
    expect(account.delegation).toMatchObject({ status: "foreign", address: serviceDeployment().simple7702Account });
    const refused = await call("POST", "/v1/transaction_intents", { key, json: { chainId: 31337, account: account.id, policy, interactions: [pay(stranger())] } });
    expect(expectError(refused, 409).message).toMatch(/changed outside this service/);
    expect((await call("POST", `/v1/accounts/${account.id}/sync`, { key })).body).toMatchObject({ deployed: false, delegation: { status: "foreign" } });
  }, 60_000);

  it("POST /v1/accounts/{id}/deploy delegates a custodial EOA with a sponsored operation of its own", async () => {
    const { body: account } = await call("POST", "/v1/accounts", { key, json: { chainId: 31337, accountType: "DelegatedV8" } });
    const deployed = await call("POST", `/v1/accounts/${account.id}/deploy`, { key, json: { policy } });
    expect(deployed.status, JSON.stringify(deployed.body)).toBe(200);
    const intentId = deployed.body.transactionIntents?.[0]?.id ?? deployed.body.id;
    expect((await waitForLanding(key, intentId)).response.status).toBe(1);
    expect(await client.getCode({ address: account.address })).toBe(delegationCode(implementation()).toLowerCase());
  }, 60_000);

  it("a chain that does not offer EntryPoint v0.8 refuses the v0.8 account types", async () => {
    vi.stubEnv("CHAIN_31337_ENTRY_POINTS", "0.6");
    try {
      for (const accountType of ["UpgradeableV8", "DelegatedV8"]) {
        expect(expectError(await call("POST", "/v1/accounts", { key, json: { chainId: 31337, accountType } }), 400).message).toMatch(/EntryPoint v0\.8, which chain 31337 does not offer/);
      }
    } finally {
      vi.unstubAllEnvs();
    }
  });

  it("one EOA is one delegated account of the project on a chain", async () => {
    const owner = privateKeyToAccount(generatePrivateKey());
    await call("POST", "/v1/accounts", { key, json: { chainId: 31337, accountType: "DelegatedV8", externalOwnerAddress: owner.address } });
    expect(expectError(await call("POST", "/v1/accounts", { key, json: { chainId: 31337, accountType: "DelegatedV8", externalOwnerAddress: owner.address } }), 409).message).toMatch(/one EOA is one account/);
  });
});
