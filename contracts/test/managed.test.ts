import { encodeDeployData, getAddress, keccak256, parseEther, toHex, type Address, type Hex, type PrivateKeyAccount } from "viem";
import { generatePrivateKey } from "viem/accounts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  managedAccountFactoryAbi,
  managedBeaconAbi,
  smartAccountAbi,
  smartAccountV2ExampleAbi,
  smartAccountV2ExampleBytecode,
} from "@/contracts/artifacts";
import { ENTRY_POINT_V06 } from "@/lib/chain/deployment";
import { beaconAddressOf, managedAddressOf, managedCallOf, type ManagedSetup } from "@/lib/chain/managed";
import {
  accountCall,
  buildOp,
  executeCall,
  fund,
  handleOps,
  newAccount,
  now,
  ownerOp,
  randomAccount,
  readAccount,
  runOp,
  send,
  signOp,
  sponsor,
  startChain,
  walletFor,
  type TestAccount,
  type TestChain,
} from "./helpers";

let t: TestChain;
let setup: ManagedSetup;
/** SmartAccountV2Example (SmartAccount plus `version()`), deployed once. */
let v2: Address;

beforeAll(async () => {
  t = await startChain(31337);
  setup = { factory: t.deployment.managedAccountFactory, implementation: t.deployment.accountImplementation, admin: t.beaconAdmin.address };
  const hash = await t.wallet.sendTransaction({
    data: encodeDeployData({ abi: smartAccountV2ExampleAbi, bytecode: smartAccountV2ExampleBytecode, args: [ENTRY_POINT_V06] }),
  });
  v2 = getAddress((await t.publicClient.waitForTransactionReceipt({ hash })).contractAddress!);
  await fund(t, t.beaconAdmin.address);
});
afterAll(async () => {
  await t?.stop();
});

const projectKey = () => keccak256(toHex(`beacon:pro_${generatePrivateKey().slice(2, 18)}`));

const factoryRead = <const F extends "beaconOf" | "getAddress" | "getAddressWithGuardian">(functionName: F, args: readonly unknown[]) =>
  t.publicClient.readContract({ address: setup.factory, abi: managedAccountFactoryAbi, functionName, args } as never) as Promise<Address>;

const implementationOf = (beacon: Address) =>
  t.publicClient.readContract({ address: beacon, abi: managedBeaconAbi, functionName: "implementation" });

/** `version()` of the account: 2 after the upgrade; before, SmartAccount has no such function and the call reverts. */
const versionOf = (account: Address) =>
  t.publicClient.readContract({ address: account, abi: smartAccountV2ExampleAbi, functionName: "version" }).then(
    (v) => Number(v),
    () => "none" as const,
  );

/** A managed account deployed through the factory by the funded key. */
async function newManaged(key: Hex, { owner = randomAccount(), guardian = null as Address | null } = {}): Promise<TestAccount> {
  const salt = generatePrivateKey();
  await send(t, null, guardian
    ? { address: setup.factory, abi: managedAccountFactoryAbi, functionName: "createAccountWithGuardian", args: [key, owner.address, guardian, salt] }
    : { address: setup.factory, abi: managedAccountFactoryAbi, functionName: "createAccount", args: [key, owner.address, salt] });
  const address = managedAddressOf(setup, key, owner.address, salt, guardian);
  await fund(t, address, parseEther("1"));
  return { address, owner, salt };
}

async function upgradeBeacon(key: Hex, implementation: Address, from: PrivateKeyAccount = t.beaconAdmin) {
  return send(t, walletFor(t, from), { address: beaconAddressOf(setup, key), abi: managedBeaconAbi, functionName: "upgradeTo", args: [implementation] });
}

describe("ManagedAccountFactory", () => {
  it("is wired to the implementation and the beacon admin", async () => {
    const read = (functionName: "accountImplementation" | "beaconAdmin") =>
      t.publicClient.readContract({ address: setup.factory, abi: managedAccountFactoryAbi, functionName });
    expect(await read("accountImplementation")).toBe(t.deployment.accountImplementation);
    expect(await read("beaconAdmin")).toBe(t.beaconAdmin.address);
  });

  it("deploys the project's beacon and the account from initCode alone, in one sponsored userOp, at the predicted addresses", async () => {
    const key = projectKey();
    const owner = randomAccount();
    const salt = generatePrivateKey();
    const guardian = randomAccount().address;
    const beacon = beaconAddressOf(setup, key);
    const account = managedAddressOf(setup, key, owner.address, salt, guardian);
    // Off-chain predictions are the factory's.
    expect(await factoryRead("beaconOf", [key])).toBe(beacon);
    expect(await factoryRead("getAddressWithGuardian", [key, owner.address, guardian, salt])).toBe(account);
    expect(await factoryRead("getAddress", [key, owner.address, salt])).toBe(managedAddressOf(setup, key, owner.address, salt));
    expect(await t.publicClient.getCode({ address: beacon })).toBeUndefined();

    const { initCode } = managedCallOf(setup.factory, key, owner.address, salt, guardian);
    const target = randomAccount().address;
    const op = await sponsor(t, await buildOp(t, { sender: account, initCode, callData: executeCall(target, 0n) }));
    const { receipt, result } = await runOp(t, op, owner);
    expect(result.sender).toBe(account);
    expect(receipt.status).toBe("success");

    expect(await readAccount(t, account, "owner")).toBe(owner.address);
    expect(await readAccount(t, account, "getGuardians")).toEqual([guardian]);
    expect(await readAccount(t, account, "entryPoint")).toBe(ENTRY_POINT_V06);
    expect(await implementationOf(beacon)).toBe(t.deployment.accountImplementation);
    expect(await t.publicClient.readContract({ address: beacon, abi: managedBeaconAbi, functionName: "owner" })).toBe(t.beaconAdmin.address);
    // A second account of the project reuses the beacon (createAccount again returns the address, deploys nothing).
    const second = await newManaged(key);
    expect(await readAccount(t, second.address, "owner")).toBe(second.owner.address);
  });

  it("leaves nothing to front-run: another owner gets another address, and a deployed account cannot be initialized again", async () => {
    const key = projectKey();
    const owner = randomAccount();
    const attacker = randomAccount();
    const salt = generatePrivateKey();
    const mine = managedAddressOf(setup, key, owner.address, salt);
    // The attacker deploys the project's beacon first and an account with the same salt: both harmless.
    await fund(t, attacker.address);
    await send(t, walletFor(t, attacker), { address: setup.factory, abi: managedAccountFactoryAbi, functionName: "deployBeacon", args: [key] });
    await send(t, walletFor(t, attacker), { address: setup.factory, abi: managedAccountFactoryAbi, functionName: "createAccount", args: [key, attacker.address, salt] });
    expect(managedAddressOf(setup, key, attacker.address, salt)).not.toBe(mine);
    expect(await t.publicClient.readContract({ address: beaconAddressOf(setup, key), abi: managedBeaconAbi, functionName: "owner" })).toBe(t.beaconAdmin.address);

    await send(t, null, { address: setup.factory, abi: managedAccountFactoryAbi, functionName: "createAccount", args: [key, owner.address, salt] });
    expect(await readAccount(t, mine, "owner")).toBe(owner.address);
    await expect(
      send(t, walletFor(t, attacker), { address: mine, abi: smartAccountAbi, functionName: "initialize", args: [attacker.address] }),
    ).rejects.toThrow(/InvalidInitialization/);
    expect(await readAccount(t, mine, "owner")).toBe(owner.address);
  });

  it("gives each project its own beacon, so the same owner and salt land elsewhere", () => {
    const owner = randomAccount().address;
    const salt = generatePrivateKey();
    const [a, b] = [projectKey(), projectKey()];
    expect(beaconAddressOf(setup, a)).not.toBe(beaconAddressOf(setup, b));
    expect(managedAddressOf(setup, a, owner, salt)).not.toBe(managedAddressOf(setup, b, owner, salt));
  });
});

describe("managed account upgrades", () => {
  it("refuses the account's own UUPS upgrade: only the beacon upgrades it (an UpgradeableV5 account's owner can)", async () => {
    const managed = await newManaged(projectKey());
    await fund(t, managed.owner.address);
    await expect(
      send(t, walletFor(t, managed.owner), { address: managed.address, abi: smartAccountAbi, functionName: "upgradeToAndCall", args: [v2, "0x"] }),
    ).rejects.toThrow(/UUPSUnauthorizedCallContext/);
    // Through the EntryPoint as well: the op runs, its call reverts, nothing changes.
    const op = await buildOp(t, { sender: managed.address, callData: accountCall("upgradeToAndCall", [v2, "0x"]) });
    const { results } = await handleOps(t, [await signOp(t, op, managed.owner)]);
    expect(results[0]!.success).toBe(false);
    expect(await versionOf(managed.address)).toBe("none");

    // The control: the same call upgrades an UpgradeableV5 (ERC-1967) account.
    const plain = await newAccount(t);
    await ownerOp(t, plain, accountCall("upgradeToAndCall", [v2, "0x"]));
    expect(await versionOf(plain.address)).toBe(2);
  });

  it("upgrades every managed account of the project in one transaction, keeping their storage; other accounts unchanged", async () => {
    const key = projectKey();
    const guardian = randomAccount().address;
    const accounts = [await newManaged(key), await newManaged(key, { guardian }), await newManaged(key)];
    // A session key on the third, used once.
    const session = randomAccount();
    const time = await now(t);
    await ownerOp(t, accounts[2]!, accountCall("registerSessionKey", [session.address, 0, time + 3600, 5, [], parseEther("0.01")]));
    await runOp(t, await buildOp(t, { sender: accounts[2]!.address, callData: executeCall(randomAccount().address, 1n) }), session);
    const otherProject = await newManaged(projectKey());
    const plain = await newAccount(t);
    const before = await Promise.all(accounts.map((a) => readAccount(t, a.address, "getSessionKey", [session.address])));
    for (const a of [...accounts, otherProject, plain]) expect(await versionOf(a.address)).toBe("none");

    const receipt = await upgradeBeacon(key, v2);
    expect(receipt.status).toBe("success");
    expect(await implementationOf(beaconAddressOf(setup, key))).toBe(v2);

    for (const [i, a] of accounts.entries()) {
      expect(await versionOf(a.address)).toBe(2);
      expect(await readAccount(t, a.address, "owner")).toBe(a.owner.address);
      expect(await readAccount(t, a.address, "getSessionKey", [session.address])).toEqual(before[i]);
    }
    expect(await readAccount(t, accounts[1]!.address, "getGuardians")).toEqual([guardian]);
    expect((await readAccount(t, accounts[2]!.address, "getSessionKey", [session.address]))[3]).toBe(1);
    // The upgraded accounts still work: an owner op and a session-key op land.
    await ownerOp(t, accounts[0]!, executeCall(randomAccount().address, 1n));
    await runOp(t, await buildOp(t, { sender: accounts[2]!.address, callData: executeCall(randomAccount().address, 1n) }), session);
    expect((await readAccount(t, accounts[2]!.address, "getSessionKey", [session.address]))[3]).toBe(2);
    // Another project's managed account and an UpgradeableV5 account did not move.
    expect(await versionOf(otherProject.address)).toBe("none");
    expect(await versionOf(plain.address)).toBe("none");

    // A new account of the upgraded project is born on the new implementation.
    expect(await versionOf((await newManaged(key)).address)).toBe(2);
  });

  it("lets only the beacon admin upgrade", async () => {
    const key = projectKey();
    const account = await newManaged(key);
    for (const stranger of [randomAccount(), account.owner]) {
      await fund(t, stranger.address);
      await expect(upgradeBeacon(key, v2, stranger)).rejects.toThrow(/OwnableUnauthorizedAccount/);
    }
    expect(await versionOf(account.address)).toBe("none");
    // And the beacon refuses an address without code.
    await expect(upgradeBeacon(key, randomAccount().address)).rejects.toThrow(/BeaconInvalidImplementation/);
  });
});
