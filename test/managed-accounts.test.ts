import { encodeDeployData, getAddress, type Address } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { randomUUID } from "node:crypto";
import { beforeAll, describe, expect, it, vi } from "vitest";
import { entryPointAbi, managedAccountFactoryAbi, managedBeaconAbi, smartAccountAbi, smartAccountV2ExampleAbi, smartAccountV2ExampleBytecode } from "@/contracts/artifacts";
import { managedBeacons, upgradeManagedAccounts } from "@/lib/accounts/managed";
import { accountSalt } from "@/lib/chain/accounts";
import { serviceDeployment } from "@/lib/chain/contracts";
import { ENTRY_POINT_V06 } from "@/lib/chain/deployment";
import { beaconKey, managedBeaconAddress } from "@/lib/chain/managed";
import { upgradeManagedAction } from "@/lib/dashboard/managed";
import { getDb } from "@/lib/db/client";
import { projectsOf, signUp } from "@/lib/developers/service";
import { ApiError } from "@/lib/errors";
import { serviceAccount } from "@/lib/keys/service-keys";
import { openSigningLink } from "@/lib/signing/service";
import { createProject, type ProjectWithKeys } from "@/lib/projects/service";
import { call, expectError, newProject, waitForLanding } from "./helpers/api";
import { clientOf, fundedWallet, mined } from "./helpers/chain";

// The dashboard action reads the session through next-auth; here the test says who is signed in.
const session = vi.hoisted(() => ({ current: null as { developerId: string } | null }));
vi.mock("next-auth", async (importOriginal) => ({ ...(await importOriginal<typeof import("next-auth")>()), getServerSession: async () => session.current }));
vi.mock("next/cache", () => ({ revalidatePath: () => {} }));

let project: ProjectWithKeys;
let key: string;
let entryPoint: { id: string };
let policy: { id: string };
/** SmartAccountV2Example on 31337: SmartAccount plus `version()` (2). */
let v2: Address;

const ctx = () => ({ projectId: project.id, livemode: false });
const ENTRY_POINT_ABI = entryPointAbi.filter((item) => item.type === "function" && item.name === "depositTo");

beforeAll(async () => {
  project = await newProject("managed accounts");
  key = project.keys.test.secret;
  entryPoint = (await call("POST", "/v1/contracts", { key, json: { name: "EntryPoint", chainId: 31337, address: ENTRY_POINT_V06, abi: ENTRY_POINT_ABI } })).body;
  policy = (await call("POST", "/v1/policies", { key, json: { name: "sponsor", chainId: 31337, strategy: { sponsorSchema: "pay_for_user" } } })).body;
  const rule = await call("POST", "/v1/policy_rules", { key, json: { policy: policy.id, type: "contract_functions", contract: entryPoint.id, functionName: "depositTo" } });
  expect(rule.status, JSON.stringify(rule.body)).toBe(200);
  const wallet = await fundedWallet(31337);
  const hash = await wallet.sendTransaction({
    data: encodeDeployData({ abi: smartAccountV2ExampleAbi, bytecode: smartAccountV2ExampleBytecode, args: [ENTRY_POINT_V06] }),
  });
  v2 = getAddress((await mined(31337, hash)).contractAddress!);
});

const createManaged = (body: Record<string, unknown>, form = false) =>
  call("POST", "/v1/accounts", { key, [form ? "form" : "json"]: { accountType: "ManagedV5", ...body } });

/** `version()`: 2 once upgraded to the example; SmartAccount has none, so the call reverts before. */
const versionOf = (address: Address) =>
  clientOf(31337)
    .readContract({ address, abi: smartAccountV2ExampleAbi, functionName: "version" })
    .then((v) => Number(v), () => "none" as const);

/** A sponsored depositTo(account) intent from the player's account, landed. */
async function sponsoredIntent(player: string) {
  const res = await call("POST", "/v1/transaction_intents", {
    key,
    json: { chainId: 31337, player, policy: policy.id, interactions: [{ contract: entryPoint.id, functionName: "depositTo", functionArgs: [player] }] },
  });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  const done = await waitForLanding(key, res.body.id);
  expect(done.response.status).toBe(1);
  return done;
}

/** What the dashboard shows for the project on 31337. */
async function recorded() {
  const status = (await managedBeacons(await getDb(), ctx())).find((b) => b.chainId === 31337)!;
  if ("error" in status) throw new Error(status.error);
  return status;
}

async function refusal(run: Promise<unknown>) {
  const err = await run.then(() => null, (e: unknown) => e);
  expect(err).toBeInstanceOf(ApiError);
  return err as ApiError;
}

describe("ManagedV5 accounts", () => {
  it("are created in both encodings as Managed_v06, at the managed factory's address for the project's beacon", async () => {
    const player = (await call("POST", "/v1/players", { key, json: { name: "m" } })).body.id as string;
    const form = await createManaged({ chainId: "31337", player }, true);
    expect(form.status, JSON.stringify(form.body)).toBe(200);
    expect(form.body).toMatchObject({ object: "account", accountType: "Managed_v06", chainId: 31337, custodial: true, deployed: false });
    const factory = { address: serviceDeployment().managedAccountFactory, abi: managedAccountFactoryAbi } as const;
    const client = clientOf(31337);
    const key_ = beaconKey(project.id);
    expect(await client.readContract({ ...factory, functionName: "getAddress", args: [key_, form.body.ownerAddress, accountSalt(player)] })).toBe(form.body.address);
    expect(await client.readContract({ ...factory, functionName: "beaconOf", args: [key_] })).toBe(managedBeaconAddress(project.id));

    // JSON, the response name accepted too, with the service's guardian built in: the same on another chain.
    const json = await createManaged({ chainId: 31338, player, defaultGuardian: true, accountType: "Managed_v06" });
    expect(json.status, JSON.stringify(json.body)).toBe(200);
    expect(json.body.accountType).toBe("Managed_v06");
    const guardianArgs = [key_, json.body.ownerAddress, serviceAccount("guardian").address, accountSalt(player)] as const;
    expect(await clientOf(31338).readContract({ ...factory, functionName: "getAddressWithGuardian", args: guardianArgs })).toBe(json.body.address);

    // Another project's managed account with the same owner and salt would be elsewhere: the beacon is part of the address.
    const other = await newProject("other managed");
    expect(managedBeaconAddress(other.id)).not.toBe(managedBeaconAddress(project.id));
  });

  it("deploy (beacon and account) with a sponsored intent, then upgrade all at once with the service function the CLI calls", async () => {
    const countBefore = (await recorded()).accounts;
    const players = await Promise.all([0, 1].map(async () => (await call("POST", "/v1/players", { key, json: { name: "m" } })).body.id as string));
    const accounts = [];
    for (const player of players) accounts.push((await createManaged({ chainId: 31337, player })).body);
    const beacon = managedBeaconAddress(project.id);
    const client = clientOf(31337);

    expect(await recorded()).toMatchObject({ beacon, deployed: false, implementation: serviceDeployment().accountImplementation, original: true, accounts: countBefore + 2 });

    const done = await sponsoredIntent(players[0]!);
    expect(done.account.id).toBe(accounts[0].id);
    expect(await client.getCode({ address: accounts[0].address })).toMatch(/^0x[0-9a-f]+/);
    expect(await client.getCode({ address: beacon })).toMatch(/^0x[0-9a-f]+/);
    expect(await client.getBalance({ address: accounts[0].address })).toBe(0n);
    expect(await versionOf(accounts[0].address)).toBe("none");

    // An UpgradeableV5 account of the same project, deployed too: not moved by the beacon.
    const plainPlayer = (await call("POST", "/v1/players", { key, json: { name: "plain" } })).body.id as string;
    const plain = (await call("POST", "/v1/accounts", { key, json: { chainId: 31337, player: plainPlayer } })).body;
    await sponsoredIntent(plainPlayer);

    const upgrade = await upgradeManagedAccounts(ctx(), 31337, v2.toLowerCase());
    expect(upgrade).toMatchObject({
      projectId: project.id,
      chainId: 31337,
      beacon,
      previousImplementation: serviceDeployment().accountImplementation,
      implementation: v2,
      beaconTransactionHash: null,
      transactionHash: expect.stringMatching(/^0x[0-9a-f]{64}$/),
    });
    const receipt = await client.getTransactionReceipt({ hash: upgrade.transactionHash! });
    expect(receipt.status).toBe("success");
    expect(receipt.from).toBe(serviceAccount("beacon-admin").address.toLowerCase());
    expect(await client.readContract({ address: beacon, abi: managedBeaconAbi, functionName: "implementation" })).toBe(v2);
    expect(await versionOf(accounts[0].address)).toBe(2);
    expect(await versionOf(plain.address)).toBe("none");

    // The second account, deployed after the upgrade, is born on it; intents keep landing on both.
    await sponsoredIntent(players[1]!);
    expect(await versionOf(accounts[1].address)).toBe(2);
    await sponsoredIntent(players[0]!);
    expect(await recorded()).toMatchObject({ deployed: true, implementation: v2, original: false });

    // Again with the same implementation: nothing to send.
    expect((await upgradeManagedAccounts(ctx(), 31337, v2)).transactionHash).toBeNull();
    // And back: the beacon upgrade works both ways.
    const back = await upgradeManagedAccounts(ctx(), 31337, serviceDeployment().accountImplementation);
    expect(back.previousImplementation).toBe(v2);
    expect(await versionOf(accounts[0].address)).toBe("none");
  });

  it("owner-held: the signing page says the project can upgrade the account's code; the owner's signature deploys it", async () => {
    const owner = privateKeyToAccount(generatePrivateKey());
    const { body: account } = await createManaged({ chainId: 31337, externalOwnerAddress: owner.address, defaultGuardian: true });
    expect(account).toMatchObject({ accountType: "Managed_v06", custodial: false, ownerAddress: owner.address });
    const res = await call("POST", "/v1/transaction_intents", {
      key,
      json: { chainId: 31337, account: account.id, policy: policy.id, interactions: [{ contract: entryPoint.id, functionName: "depositTo", functionArgs: [account.id] }] },
    });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.nextAction.type).toBe("sign_with_wallet");
    const page = await openSigningLink(await getDb(), new URL(res.body.nextAction.payload.signingUrl).searchParams.get("t")!, res.body.id);
    if (page.state !== "awaiting") throw new Error(JSON.stringify(page));
    const guardian = serviceAccount("guardian").address;
    expect(page.view.calls[0]).toMatchObject({
      kind: "deployment",
      to: serviceDeployment().managedAccountFactory,
      functionName: "createAccountWithGuardian",
      attention: true,
      summary: `Deploys your managed account (${account.address}), owned by ${owner.address}, with the service (${guardian}) as guardian: it can help recover the account if you lose your key. The project can upgrade the code of its managed accounts`,
    });
    const signature = await owner.signMessage({ message: { raw: res.body.userOperationHash } });
    expect((await call("POST", `/v1/transaction_intents/${res.body.id}/signature`, { key, json: { signature } })).status).toBe(200);
    expect((await waitForLanding(key, res.body.id)).response.status).toBe(1);
    const client = clientOf(31337);
    expect(await client.readContract({ address: account.address, abi: smartAccountAbi, functionName: "owner" })).toBe(owner.address);
    expect(await client.readContract({ address: account.address, abi: smartAccountAbi, functionName: "isGuardian", args: [guardian] })).toBe(true);
  });

  it("sign_payload before deployment: the ERC-6492 wrapper deploys beacon and account in the verifier's simulation", async () => {
    // A project whose beacon is not deployed on 31338 either: the wrapper's factory call must bring both.
    const fresh = await newProject("managed 6492");
    const { body: account } = await call("POST", "/v1/accounts", { key: fresh.keys.test.secret, json: { chainId: 31338, accountType: "ManagedV5" } });
    expect(account.accountType).toBe("Managed_v06");
    const typed = {
      domain: { name: "Game", version: "1", chainId: 31338 },
      types: { Score: [{ name: "points", type: "uint256" }] },
      primaryType: "Score",
      value: { points: "42" },
    };
    const res = await call("POST", `/v1/accounts/${account.id}/sign_payload`, { key: fresh.keys.test.secret, json: typed });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    const client = clientOf(31338);
    const valid = await client.verifyTypedData({ address: account.address, domain: typed.domain, types: typed.types, primaryType: "Score", message: { points: 42n }, signature: res.body.signature });
    expect(valid).toBe(true);
    expect(await client.getCode({ address: account.address })).toBeUndefined();
    expect(await client.getCode({ address: managedBeaconAddress(fresh.id) })).toBeUndefined();
  });

  it("take session keys and player-level ownership requests like any SmartAccount, and keep them across the project's upgrade", async () => {
    const own = await newProject("managed sessions");
    const k = own.keys.test.secret;
    const selfCalls = (await call("POST", "/v1/policies", { key: k, json: { name: "self calls", chainId: 31337, strategy: { sponsorSchema: "pay_for_user" } } })).body;
    await call("POST", "/v1/policy_rules", { key: k, json: { policy: selfCalls.id, type: "account_functions" } });
    const { body: account } = await call("POST", "/v1/accounts", { key: k, form: { chainId: "31337", accountType: "ManagedV5" } });
    const player = account.player.id as string;
    const sessionKey = privateKeyToAccount(generatePrivateKey()).address;
    const now = Number((await clientOf(31337).getBlock()).timestamp);
    const session = await call("POST", "/v1/sessions", { key: k, json: { address: sessionKey, chainId: 31337, player, validAfter: 0, validUntil: now + 3600, limit: 5, policy: selfCalls.id } });
    expect(session.status, JSON.stringify(session.body)).toBe(200);
    expect(session.body.account.id).toBe(account.id);
    expect((await waitForLanding(k, session.body.transactionIntents[0].id)).response.status).toBe(1);
    const newOwner = privateKeyToAccount(generatePrivateKey()).address;
    const requested = await call("POST", `/v1/players/${player}/request_transfer_ownership`, { key: k, json: { policy: selfCalls.id, chainId: 31337, newOwnerAddress: newOwner } });
    expect(requested.status, JSON.stringify(requested.body)).toBe(200);
    expect((await waitForLanding(k, requested.body.id)).response.status).toBe(1);

    const read = <F extends "getSessionKey" | "pendingOwner" | "owner">(functionName: F, args?: readonly unknown[]) =>
      clientOf(31337).readContract({ address: account.address, abi: smartAccountAbi, functionName, args } as never) as Promise<unknown>;
    const before = [await read("getSessionKey", [sessionKey]), await read("pendingOwner"), await read("owner")];
    expect((before[0] as unknown[])[4]).toBe(true);
    expect(before[1]).toBe(newOwner);
    await upgradeManagedAccounts({ projectId: own.id, livemode: false }, 31337, v2);
    expect(await versionOf(account.address)).toBe(2);
    expect([await read("getSessionKey", [sessionKey]), await read("pendingOwner"), await read("owner")]).toEqual(before);
    expect((await call("GET", `/v1/sessions/${session.body.id}`, { key: k })).body.isActive).toBe(true);
  });

  it("deploys the project's beacon first when an upgrade comes before any managed account", async () => {
    const fresh = await newProject("fresh managed");
    const beacon = managedBeaconAddress(fresh.id);
    expect(await clientOf(31338).getCode({ address: beacon })).toBeUndefined();
    const upgrade = await upgradeManagedAccounts({ projectId: fresh.id, livemode: false }, 31338, serviceDeployment().accountImplementation);
    expect(upgrade.beaconTransactionHash).toMatch(/^0x[0-9a-f]{64}$/);
    expect(upgrade.transactionHash).toBeNull();
    expect(await clientOf(31338).getCode({ address: beacon })).toMatch(/^0x[0-9a-f]+/);
  });

  it("refuses an implementation that would brick the accounts, and chains of the other mode", async () => {
    const eoa = privateKeyToAccount(generatePrivateKey()).address;
    const noCode = await refusal(upgradeManagedAccounts(ctx(), 31337, eoa));
    expect(noCode.status).toBe(400);
    expect(noCode.message).toMatch(/has no code on chain 31337/);
    expect(noCode.details?.implementation).toBeDefined();
    // The EntryPoint has code but is not an account; the paymaster answers entryPoint() but is no UUPS implementation.
    expect((await refusal(upgradeManagedAccounts(ctx(), 31337, ENTRY_POINT_V06))).message).toMatch(/not an account implementation of our EntryPoint/);
    expect((await refusal(upgradeManagedAccounts(ctx(), 31337, serviceDeployment().paymaster))).message).toMatch(/does not answer proxiableUUID/);
    // A deployed account answers entryPoint() but is a proxy.
    const player = (await call("POST", "/v1/players", { key, json: { name: "p" } })).body.id as string;
    const account = (await createManaged({ chainId: 31337, player })).body;
    await sponsoredIntent(player);
    expect((await refusal(upgradeManagedAccounts(ctx(), 31337, account.address))).message).toMatch(/proxiableUUID.*proxy/);
    expect((await refusal(upgradeManagedAccounts(ctx(), 31337, "0x1234"))).details?.implementation?.message).toMatch(/20-byte address/);
    expect((await refusal(upgradeManagedAccounts(ctx(), 31339, v2))).message).toMatch(/31339 is a live chain/);
    // Nothing changed.
    expect(await clientOf(31337).readContract({ address: managedBeaconAddress(project.id), abi: managedBeaconAbi, functionName: "implementation" })).toBe(
      serviceDeployment().accountImplementation,
    );
  });
});

describe("the dashboard's upgrade", () => {
  it("upgrades for the project's developers only, with the API's refusals shown on the form", async () => {
    const db = await getDb();
    const stamp = randomUUID();
    const developer = await signUp(db, { email: `managed-${stamp}@example.com`, password: "a long enough password", organization: "Managed Co" });
    const outsider = await signUp(db, { email: `outsider-${stamp}@example.com`, password: "a long enough password" });
    const mine = await createProject(db, "Managed dashboard", (await projectsOf(db, developer.id))[0]!.organizationId);
    const target = { projectId: mine.id, mode: "test", chainId: 31337 };
    const form = (implementation: string) => {
      const data = new FormData();
      data.set("implementation", implementation);
      return data;
    };

    session.current = { developerId: outsider.id };
    await expect(upgradeManagedAction(target, {}, form(v2))).rejects.toThrow(/NEXT_HTTP_ERROR_FALLBACK;404/);
    expect(await clientOf(31337).getCode({ address: managedBeaconAddress(mine.id) })).toBeUndefined();

    session.current = { developerId: developer.id };
    const refused = await upgradeManagedAction(target, {}, form(ENTRY_POINT_V06));
    expect(refused.error?.message).toMatch(/not an account implementation/);
    expect(refused.error?.details?.implementation).toBeDefined();
    const done = await upgradeManagedAction(target, {}, form(v2));
    expect(done).toMatchObject({ ok: true, data: { implementation: v2, transactionHash: expect.stringMatching(/^0x/) } });
    expect(await clientOf(31337).readContract({ address: managedBeaconAddress(mine.id), abi: managedBeaconAbi, functionName: "implementation" })).toBe(v2);
    // Live mode's chains only in live mode.
    expect((await upgradeManagedAction({ ...target, mode: "live" }, {}, form(v2))).error?.message).toMatch(/31337 is a test chain/);
  });
});

describe("ZKSyncUpgradeableV1", () => {
  it("is refused with a 400 naming the configured chains, none of them zkSync", async () => {
    for (const form of [false, true]) {
      const error = expectError(await call("POST", "/v1/accounts", { key, [form ? "form" : "json"]: { chainId: 31337, accountType: "ZKSyncUpgradeableV1" } }), 400, "invalid_request_error");
      expect(error.message).toMatch(/accountType ZKSyncUpgradeableV1 needs a zkSync chain; this service has chains 31337 \(Local anvil\), 31338 \(Local anvil\), 31339 \(Local anvil\), none of them zkSync/);
      expect(error.message).toMatch(/Accepted: .*UpgradeableV5.*ManagedV5/);
      expect(error.details?.accountType).toMatchObject({ value: "ZKSyncUpgradeableV1" });
    }
    const unknown = expectError(await call("POST", "/v1/accounts", { key, json: { chainId: 31337, accountType: "Managed" } }), 400);
    expect(unknown.message).toMatch(/Managed is not an account type\. Accepted: UpgradeableV5, ManagedV5/);
  });
});
