import { getAddress, isAddress, type Address, type Hex } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { beforeAll, describe, expect, it } from "vitest";
import { accountFactoryAbi, smartAccountAbi } from "@/contracts/artifacts";
import { serviceDeployment } from "@/lib/chain/contracts";
import { getDb } from "@/lib/db/client";
import { findOwnerKey, ownerSigner } from "@/lib/keys/custodial";
import type { ProjectWithKeys } from "@/lib/projects/service";
import { call, expectError, newProject } from "./helpers/api";
import { clientOf, fundedWallet, mined } from "./helpers/chain";

let project: ProjectWithKeys;
let key: string;

beforeAll(async () => {
  project = await newProject("accounts");
  key = project.keys.test.secret;
});

const createAccount = async (body: Record<string, unknown>, options: { key?: string; form?: boolean } = {}) =>
  call("POST", "/v1/accounts", { key: options.key ?? key, [options.form ? "form" : "json"]: body });

const newPlayer = async () => (await call("POST", "/v1/players", { key, json: { name: "p" } })).body.id as string;

/** Deploys the account the way its initCode would: through our factory, from any funded key. */
async function deployThroughFactory(chainId: number, owner: Address, playerId: string) {
  const { accountSalt } = await import("@/lib/chain/accounts");
  const wallet = await fundedWallet(chainId);
  const hash = await wallet.writeContract({
    address: serviceDeployment().accountFactory,
    abi: accountFactoryAbi,
    functionName: "createAccount",
    args: [owner, accountSalt(playerId)],
  });
  await mined(chainId, hash);
}

describe("creating accounts", () => {
  it("creates a custodial, counterfactual account whose address the factory confirms, in both encodings", async () => {
    const player = await newPlayer();
    const res = await createAccount({ chainId: "31337", player }, { form: true });
    expect(res.status).toBe(200);
    const account = res.body;
    expect(account).toMatchObject({
      object: "account",
      chainId: 31337,
      deployed: false,
      custodial: true,
      embeddedSigner: false,
      accountType: "Upgradeable_v06",
      player: { id: player },
      transactionIntents: [],
    });
    expect(account.id).toMatch(/^acc_/);
    expect(isAddress(account.address, { strict: true })).toBe(true);
    expect(account.address).toBe(getAddress(account.address));
    expect(isAddress(account.ownerAddress)).toBe(true);
    expect(account.ownerAddress).not.toBe(account.address);

    // the factory on chain computes the same counterfactual address
    const salt = (await import("@/lib/chain/accounts")).accountSalt(player);
    const onChain = await clientOf(31337).readContract({
      address: serviceDeployment().accountFactory,
      abi: accountFactoryAbi,
      functionName: "getAddress",
      args: [account.ownerAddress, salt],
    });
    expect(onChain).toBe(account.address);
    expect(await clientOf(31337).getCode({ address: account.address })).toBeUndefined();

    const json = await createAccount({ chainId: 31337 });
    expect(json.status).toBe(200);
    expect(json.body.player.id).toMatch(/^pla_/);
  });

  it("gives one player the same address on every chain, and different players different addresses", async () => {
    const player = await newPlayer();
    const a = (await createAccount({ chainId: 31337, player })).body;
    const b = (await createAccount({ chainId: 31338, player }, { form: true })).body;
    expect(b.chainId).toBe(31338);
    expect(b.address).toBe(a.address);
    expect(b.ownerAddress).toBe(a.ownerAddress);
    expect(b.id).not.toBe(a.id);
    const other = (await createAccount({ chainId: 31337 })).body;
    expect(other.address).not.toBe(a.address);
  });

  it("gives a defaultGuardian account the factory's address for its owner, salt and the service as guardian, the same on every chain", async () => {
    const { accountSalt } = await import("@/lib/chain/accounts");
    const { serviceAccount } = await import("@/lib/keys/service-keys");
    const player = await newPlayer();
    const a = (await createAccount({ chainId: 31337, player, defaultGuardian: true })).body;
    const b = (await createAccount({ chainId: 31338, player, defaultGuardian: true })).body;
    expect(b.address).toBe(a.address);
    const args = [a.ownerAddress, serviceAccount("guardian").address, accountSalt(player)] as const;
    const factory = { address: serviceDeployment().accountFactory, abi: accountFactoryAbi } as const;
    for (const chainId of [31337, 31338]) {
      expect(await clientOf(chainId).readContract({ ...factory, functionName: "getAddressWithGuardian", args })).toBe(a.address);
    }
    // Without the guardian the same owner and salt are another account.
    expect(await clientOf(31337).readContract({ ...factory, functionName: "getAddress", args: [a.ownerAddress, accountSalt(player)] })).not.toBe(a.address);
  });

  it("deploys at exactly the counterfactual address, on each chain", async () => {
    const player = await newPlayer();
    const accounts = [(await createAccount({ chainId: 31337, player })).body, (await createAccount({ chainId: 31338, player })).body];
    for (const account of accounts) {
      await deployThroughFactory(account.chainId, account.ownerAddress, player);
      expect(await clientOf(account.chainId).getCode({ address: account.address })).toMatch(/^0x[0-9a-f]{10,}/);
      const synced = await call("POST", `/v1/accounts/${account.id}/sync`, { key });
      expect(synced.status).toBe(200);
      expect(synced.body).toMatchObject({ id: account.id, deployed: true, ownerAddress: account.ownerAddress, custodial: true });
    }
  });

  it("creates the player when none is given, and the player lists and expands its accounts", async () => {
    const { body: account } = await createAccount({ chainId: 31337 });
    const { body: player } = await call("GET", `/v1/players/${account.player.id}`, { key });
    expect(player.accounts).toEqual([{ id: account.id }]);
    const { body: second } = await createAccount({ chainId: 31338, player: player.id });
    const expanded = await call("GET", `/v1/players/${player.id}`, { key, query: { expand: ["accounts"] } });
    expect(expanded.body.accounts.map((a: { id: string }) => a.id)).toEqual([second.id, account.id]);
    expect(expanded.body.accounts[0]).toMatchObject({ object: "account", chainId: 31338, address: account.address });
    const list = await call("GET", "/v1/players", { key, query: { expand: "accounts", limit: 100 } });
    expect(list.body.data.find((p: { id: string }) => p.id === player.id).accounts).toHaveLength(2);
    // Unexpanded, the list reads the ids in its own statement: the same ids, in the same order, as one player's.
    const plain = await call("GET", "/v1/players", { key, query: { limit: 100 } });
    expect(plain.body.data.find((p: { id: string }) => p.id === player.id).accounts).toEqual([{ id: second.id }, { id: account.id }]);
  });

  it("makes a non-custodial account for an external owner", async () => {
    const owner = privateKeyToAccount(generatePrivateKey()).address;
    const player = await newPlayer();
    const { body: custodial } = await createAccount({ chainId: 31337, player });
    const res = await createAccount({ chainId: 31338, player, externalOwnerAddress: owner.toLowerCase() });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ custodial: false, ownerAddress: owner, deployed: false });
    expect(res.body.address).not.toBe(custodial.address);
  });

  it("refuses a second account for one player on one chain, also under concurrent requests", async () => {
    const player = await newPlayer();
    const first = await createAccount({ chainId: 31337, player });
    const again = expectError(await createAccount({ chainId: 31337, player }), 409);
    expect(again.message).toContain(first.body.id);

    const racer = await newPlayer();
    const results = await Promise.all(Array.from({ length: 12 }, (_, i) => createAccount({ chainId: 31338, player: racer }, { form: i % 2 === 0 })));
    expect(results.filter((r) => r.status === 200)).toHaveLength(1);
    for (const r of results.filter((r) => r.status !== 200)) expectError(r, 409);
    const list = await call("GET", "/v1/accounts", { key, query: { player: racer } });
    expect(list.body.total).toBe(1);
  });

  it("refuses chains the key's mode may not use, and unknown chains, with the chains it may", async () => {
    const live = expectError(await createAccount({ chainId: 31339 }), 400);
    expect(live.message).toMatch(/31339 is a live chain.*test key.*31337, 31338/);
    const test = expectError(await createAccount({ chainId: 31337 }, { key: project.keys.live.secret }), 400);
    expect(test.message).toMatch(/31337 is a test chain.*live key.*31339/);
    const unknown = expectError(await createAccount({ chainId: 1 }), 400);
    expect(unknown.details?.chainId?.message).toMatch(/Unsupported chainId 1.*31337/);
    expect((await createAccount({ chainId: 31339 }, { key: project.keys.live.secret })).body).toMatchObject({ chainId: 31339 });
  });

  it("refuses unknown account types listing the accepted ones, ERC-6551 fields on other types, and bad fields, with details", async () => {
    const unknown = expectError(await createAccount({ chainId: 31337, accountType: "Nonsense" }), 400);
    expect(unknown.message).toMatch(/Nonsense is not an account type\. Accepted: .*UpgradeableV5/);
    expect(unknown.details?.accountType).toBeDefined();
    expect((await createAccount({ chainId: 31337, accountType: "Upgradeable_v06" })).status).toBe(200);
    expect((await createAccount({ chainId: 31337, accountType: "UpgradeableV5" })).status).toBe(200);
    expect(expectError(await createAccount({ chainId: 31337, tokenId: 1 }), 400).details?.tokenId).toBeDefined();
    expect(expectError(await createAccount({ chainId: 31337, externalOwnerAddress: "0x123" }), 400).details?.externalOwnerAddress).toBeDefined();
    expect(expectError(await createAccount({}), 400).details?.chainId).toBeDefined();
    expectError(await createAccount({ chainId: 31337, player: "pla_doesnotexist" }), 404);
    expect(expectError(await createAccount({ chainId: 31337, player: "acc_1" }), 400).details?.player).toBeDefined();
    expectError(await createAccount({ chainId: 31337, defaultGuardian: "maybe" }), 400);
    expect((await createAccount({ chainId: 31337, defaultGuardian: "true" }, { form: true })).status).toBe(200);
  });
});

describe("reading accounts", () => {
  it("lists a player's accounts newest first, paginated, with player expansion; player is required", async () => {
    const player = await newPlayer();
    const made = [];
    for (const chainId of [31337, 31338]) made.push((await createAccount({ chainId, player })).body);
    const list = await call("GET", "/v1/accounts", { key, query: { player } });
    expect(list.body).toMatchObject({ object: "list", url: "/v1/accounts", start: 0, end: 2, total: 2 });
    expect(list.body.data.map((a: { id: string }) => a.id)).toEqual([made[1].id, made[0].id]);
    const page = await call("GET", "/v1/accounts", { key, query: { player, limit: 1, skip: 1, order: "asc" } });
    expect(page.body.data.map((a: { id: string }) => a.id)).toEqual([made[1].id]);
    const expanded = await call("GET", "/v1/accounts", { key, query: { player, expand: ["player"] } });
    expect(expanded.body.data[0].player).toMatchObject({ id: player, object: "player", accounts: [{ id: made[1].id }, { id: made[0].id }] });

    expect(expectError(await call("GET", "/v1/accounts", { key }), 400).details?.player).toBeDefined();
    expectError(await call("GET", "/v1/accounts", { key, query: { player: "pla_missing" } }), 404);
    expectError(await call("GET", "/v1/accounts", { key, query: { player, expand: ["owner"] } }), 400);
  });

  it("gets an account with expansion, and never another project's or mode's", async () => {
    const { body: account } = await createAccount({ chainId: 31337 });
    expect((await call("GET", `/v1/accounts/${account.id}`, { key })).body).toEqual(account);
    const expanded = await call("GET", `/v1/accounts/${account.id}`, { key, query: { expand: ["player", "transactionIntents"] } });
    expect(expanded.body.player).toMatchObject({ id: account.player.id, object: "player" });
    const other = await newProject("other");
    for (const outsider of [other.keys.test.secret, project.keys.live.secret]) {
      expectError(await call("GET", `/v1/accounts/${account.id}`, { key: outsider }), 404);
      expectError(await call("POST", `/v1/accounts/${account.id}/sync`, { key: outsider }), 404);
      expectError(await call("GET", "/v1/accounts", { key: outsider, query: { player: account.player.id } }), 404);
      expectError(await call("POST", `/v1/accounts/${account.id}/sign_payload`, { key: outsider, json: MAIL }), 404);
    }
    expectError(await call("GET", `/v1/accounts/${account.id}`, { key: project.keys.test.publishable }), 403);
  });
});

describe("sync", () => {
  it("reflects an ownership change made directly on chain, step by step", async () => {
    const ownerWallet = await fundedWallet(31337);
    const player = await newPlayer();
    const { body: account } = await createAccount({ chainId: 31337, player, externalOwnerAddress: ownerWallet.account.address });
    expect((await call("POST", `/v1/accounts/${account.id}/sync`, { key })).body).toMatchObject({ deployed: false, ownerAddress: ownerWallet.account.address });

    await deployThroughFactory(31337, ownerWallet.account.address, player);
    const newOwner = await fundedWallet(31337);
    await mined(31337, await ownerWallet.writeContract({ address: account.address, abi: smartAccountAbi, functionName: "transferOwnership", args: [newOwner.account.address] }));
    const pending = (await call("POST", `/v1/accounts/${account.id}/sync`, { key })).body;
    expect(pending).toMatchObject({ deployed: true, ownerAddress: ownerWallet.account.address, pendingOwnerAddress: newOwner.account.address });

    await mined(31337, await newOwner.writeContract({ address: account.address, abi: smartAccountAbi, functionName: "acceptOwnership" }));
    const synced = (await call("POST", `/v1/accounts/${account.id}/sync`, { key })).body;
    expect(synced).toMatchObject({ deployed: true, ownerAddress: newOwner.account.address, custodial: false });
    expect(synced.pendingOwnerAddress).toBeUndefined();
    expect((await call("GET", `/v1/accounts/${account.id}`, { key })).body).toEqual(synced);
  });

  it("marks a custodial account non-custodial once its owner moves away from our key", async () => {
    const player = await newPlayer();
    const { body: account } = await createAccount({ chainId: 31338, player });
    await deployThroughFactory(31338, account.ownerAddress, player);
    // Act as the custodial owner itself (the test holds the same database and master key).
    const signer = ownerSigner((await findOwnerKey(await getDb(), player))!);
    const funded = await fundedWallet(31338);
    await mined(31338, await funded.sendTransaction({ to: signer.address, value: 10n ** 17n }));
    const { walletClient } = await import("@/lib/chain/clients");
    const { findChain } = await import("@/lib/chain/registry");
    const ownerWallet = walletClient(findChain(31338)!, signer);
    const newOwner = await fundedWallet(31338);
    await mined(31338, await ownerWallet.writeContract({ address: account.address, abi: smartAccountAbi, functionName: "transferOwnership", args: [newOwner.account.address] }));
    expect((await call("POST", `/v1/accounts/${account.id}/sync`, { key })).body).toMatchObject({ custodial: true, pendingOwnerAddress: newOwner.account.address });
    // only the pending owner may accept
    const stranger = await fundedWallet(31338);
    await expect(stranger.writeContract({ address: account.address, abi: smartAccountAbi, functionName: "acceptOwnership" })).rejects.toThrow();
    await mined(31338, await newOwner.writeContract({ address: account.address, abi: smartAccountAbi, functionName: "acceptOwnership" }));
    expect((await call("POST", `/v1/accounts/${account.id}/sync`, { key })).body).toMatchObject({ custodial: false, ownerAddress: newOwner.account.address });
    // and sign_payload now refuses: the service no longer holds the owner key
    expectError(await call("POST", `/v1/accounts/${account.id}/sign_payload`, { key, json: MAIL }), 400);
  });
});

const MAIL = {
  domain: { name: "Ether Mail", version: "1", chainId: 31337, verifyingContract: "0xCcCCccccCCCCcCCCCCCcCcCccCcCCCcCcccccccC" },
  types: {
    Person: [
      { name: "name", type: "string" },
      { name: "wallet", type: "address" },
    ],
    Mail: [
      { name: "from", type: "Person" },
      { name: "to", type: "Person" },
      { name: "contents", type: "string" },
    ],
  },
  primaryType: "Mail",
  value: {
    from: { name: "Cow", wallet: "0xCD2a3d9F938E13CD947Ec05AbC7FE734Df8DD826" },
    to: { name: "Bob", wallet: "0xbBbBBBBbbBBBbbbBbbBbbbbBBbBbbbbBbBbbBBbB" },
    contents: "Hello, Bob!",
  },
};

describe("sign_payload", () => {
  const EIP1271_MAGIC = "0x1626ba7e";

  it("signs typed data so that the deployed account's isValidSignature accepts it (real eth_call)", async () => {
    const { hashTypedData } = await import("viem");
    const player = await newPlayer();
    const { body: account } = await createAccount({ chainId: 31337, player });
    await deployThroughFactory(31337, account.ownerAddress, player);
    const expectedHash = hashTypedData({ ...MAIL, message: MAIL.value } as never);

    for (const encoding of ["json", "form"] as const) {
      const res = await call("POST", `/v1/accounts/${account.id}/sign_payload`, { key, [encoding]: { ...MAIL, hash: expectedHash } });
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ object: "signature", account: account.id, address: account.address, hash: expectedHash });
      const result = await clientOf(31337).readContract({
        address: account.address,
        abi: smartAccountAbi,
        functionName: "isValidSignature",
        args: [expectedHash, res.body.signature],
      });
      expect(result).toBe(EIP1271_MAGIC);
      // the same signature does not vouch for a different hash
      const other = await clientOf(31337).readContract({
        address: account.address,
        abi: smartAccountAbi,
        functionName: "isValidSignature",
        args: [("0x" + "11".repeat(32)) as Hex, res.body.signature],
      });
      expect(other).not.toBe(EIP1271_MAGIC);
    }
  });

  it("wraps the signature of a not-yet-deployed account in ERC-6492, which verifiers accept (with or without a built-in guardian)", async () => {
    for (const defaultGuardian of [false, true]) {
      const { body: account } = await createAccount({ chainId: 31338, defaultGuardian });
      const res = await call("POST", `/v1/accounts/${account.id}/sign_payload`, { key, json: MAIL });
      expect(res.status).toBe(200);
      expect(res.body.signature.endsWith("6492649264926492649264926492649264926492649264926492649264926492")).toBe(true);
      const valid = await clientOf(31338).verifyTypedData({
        address: account.address,
        domain: MAIL.domain as never,
        types: MAIL.types,
        primaryType: "Mail",
        message: MAIL.value,
        signature: res.body.signature,
      });
      expect(valid, `defaultGuardian ${defaultGuardian}`).toBe(true);
      // the account stays counterfactual: verification simulated the deployment only
      expect(await clientOf(31338).getCode({ address: account.address })).toBeUndefined();
    }
  });

  it("refuses non-custodial accounts, a mismatching hash and malformed typed data, with 400s", async () => {
    const { body: external } = await createAccount({ chainId: 31337, externalOwnerAddress: privateKeyToAccount(generatePrivateKey()).address });
    expect(expectError(await call("POST", `/v1/accounts/${external.id}/sign_payload`, { key, json: MAIL }), 400).message).toMatch(/not custodial/);

    const { body: account } = await createAccount({ chainId: 31337 });
    const path = `/v1/accounts/${account.id}/sign_payload`;
    expect(expectError(await call("POST", path, { key, json: { ...MAIL, hash: "0x" + "00".repeat(32) } }), 400).details?.hash).toBeDefined();
    expectError(await call("POST", path, { key, json: { ...MAIL, primaryType: "Letter" } }), 400);
    expectError(await call("POST", path, { key, json: { ...MAIL, value: { from: "nobody" } } }), 400);
    expectError(await call("POST", path, { key, json: { ...MAIL, types: { Mail: [{ name: "x", type: "uint7" }] } } }), 400);
    expect(expectError(await call("POST", path, { key, json: { types: MAIL.types } }), 400).details).toMatchObject({
      domain: expect.anything(),
      primaryType: expect.anything(),
      value: expect.anything(),
    });
    expectError(await call("POST", path, { key, json: { ...MAIL, domain: { ...MAIL.domain, verifyingContract: "nope" } } }), 400);
    expectError(await call("POST", "/v1/accounts/acc_missing/sign_payload", { key, json: MAIL }), 404);
  });
});

describe("chains that do not answer", () => {
  it("answers 502 with a clear message, and never shows the RPC URL", async () => {
    process.env.CHAIN_31999_RPC_URL = "http://127.0.0.1:9/secret-token";
    process.env.CHAIN_31999_LIVE = "false";
    try {
      const { body: account } = await createAccount({ chainId: 31999 });
      expect(account.chainId).toBe(31999);
      const error = expectError(await call("POST", `/v1/accounts/${account.id}/sync`, { key }), 502);
      expect(error.message).toMatch(/chain 31999.*did not answer/);
      expect(JSON.stringify(error)).not.toContain("secret-token");
    } finally {
      delete process.env.CHAIN_31999_RPC_URL;
      delete process.env.CHAIN_31999_LIVE;
    }
  });
});
