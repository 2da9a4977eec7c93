import { concat, encodeAbiParameters, getAddress, getContractAddress, keccak256, toFunctionSelector, zeroAddress, type Abi, type Hex } from "viem";
import { generatePrivateKey } from "viem/accounts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  accountFactoryAbi,
  accountFactoryV8Abi,
  delegatedAccountV8Abi,
  entryPointBytecode,
  erc1967ProxyBytecode,
  smartAccountAbi,
  smartAccountV8Abi,
  verifyingPaymasterAbi,
  verifyingPaymasterV8Abi,
} from "@/contracts/artifacts";
import {
  CREATE2_DEPLOYER,
  DEPLOY_SALT,
  ENTRY_POINT_V06,
  ENTRY_POINT_V08,
  SIMPLE_7702_ACCOUNT,
  deploymentAddresses,
  ensureDeployment,
} from "@/lib/chain/deployment";
import { counterfactualAddress, randomAccount, readAccount, send, startChain, type TestChain } from "./helpers";

// The one file with two chains: addresses must match across them.
let a: TestChain;
let b: TestChain;

beforeAll(async () => {
  [a, b] = await Promise.all([startChain(31337), startChain(31338)]);
});
afterAll(async () => {
  await Promise.all([a?.stop(), b?.stop()]);
});

describe("deployment", () => {
  it("lands at deploymentAddresses(), with the EntryPoints at the canonical v0.6 and v0.8 addresses", async () => {
    const expected = deploymentAddresses({
      paymasterOwner: a.paymasterOwner.address,
      paymasterSigner: a.paymasterSigner.address,
      beaconAdmin: a.beaconAdmin.address,
    });
    expect(expected.entryPoint).toBe(ENTRY_POINT_V06);
    expect(expected.entryPointV08).toBe(ENTRY_POINT_V08);
    expect(expected.simple7702Account).toBe(SIMPLE_7702_ACCOUNT);
    for (const t of [a, b]) {
      expect(t.deployment).toEqual({
        ...expected,
        deployed: ["entryPoint", "accountImplementation", "accountFactory", "paymaster", "managedAccountFactory", "tokenBoundRegistry", "tokenBoundAccountImplementation", "entryPointV08", "simple7702Account", "accountImplementationV08", "accountFactoryV08", "paymasterV08", "delegatedAccountV08"],
      });
      for (const address of Object.values(expected)) {
        expect(address).toBe(getAddress(address));
        expect((await t.publicClient.getCode({ address }))?.length).toBeGreaterThan(2);
      }
    }
    // Sanity of the constants: salt 0 through the CREATE2 deployer is what makes the EntryPoint canonical.
    expect(getContractAddress({ opcode: "CREATE2", from: CREATE2_DEPLOYER, salt: DEPLOY_SALT, bytecode: entryPointBytecode })).toBe(
      ENTRY_POINT_V06,
    );
  });

  it("deploys nothing the second time", async () => {
    const again = await ensureDeployment(a.publicClient, a.wallet, {
      paymasterOwner: a.paymasterOwner.address,
      paymasterSigner: a.paymasterSigner.address,
      beaconAdmin: a.beaconAdmin.address,
    });
    expect(again.deployed).toEqual([]);
    expect({ ...again, deployed: undefined }).toEqual({ ...a.deployment, deployed: undefined });
  });

  it("gives implementation and factory installation-independent addresses; the paymaster's and managed factory's follow their keys", () => {
    const mine = deploymentAddresses({ paymasterOwner: a.paymasterOwner.address, paymasterSigner: a.paymasterSigner.address, beaconAdmin: a.beaconAdmin.address });
    const other = deploymentAddresses({ paymasterOwner: randomAccount().address, paymasterSigner: randomAccount().address, beaconAdmin: randomAccount().address });
    expect(other.entryPoint).toBe(mine.entryPoint);
    expect(other.accountImplementation).toBe(mine.accountImplementation);
    expect(other.accountFactory).toBe(mine.accountFactory);
    expect(other.tokenBoundRegistry).toBe(mine.tokenBoundRegistry);
    expect(other.tokenBoundAccountImplementation).toBe(mine.tokenBoundAccountImplementation);
    expect(other.accountImplementationV08).toBe(mine.accountImplementationV08);
    expect(other.accountFactoryV08).toBe(mine.accountFactoryV08);
    expect(other.delegatedAccountV08).toBe(mine.delegatedAccountV08);
    expect(other.paymaster).not.toBe(mine.paymaster);
    expect(other.paymasterV08).not.toBe(mine.paymasterV08);
    expect(other.managedAccountFactory).not.toBe(mine.managedAccountFactory);
  });

  it("wires the contracts together", async () => {
    const { deployment, publicClient } = a;
    const read = (address: Hex, abi: typeof accountFactoryAbi | typeof verifyingPaymasterAbi | typeof smartAccountAbi, functionName: string) =>
      publicClient.readContract({ address, abi, functionName } as never) as Promise<unknown>;
    expect(await read(deployment.accountFactory, accountFactoryAbi, "accountImplementation")).toBe(deployment.accountImplementation);
    expect(await read(deployment.accountImplementation, smartAccountAbi, "entryPoint")).toBe(ENTRY_POINT_V06);
    expect(await read(deployment.paymaster, verifyingPaymasterAbi, "entryPoint")).toBe(ENTRY_POINT_V06);
    expect(await read(deployment.paymaster, verifyingPaymasterAbi, "owner")).toBe(a.paymasterOwner.address);
    expect(await read(deployment.paymaster, verifyingPaymasterAbi, "verifyingSigner")).toBe(a.paymasterSigner.address);
    // The implementation itself can never be initialized (and so never owned).
    await expect(
      send(a, null, { address: deployment.accountImplementation, abi: smartAccountAbi, functionName: "initialize", args: [a.wallet.account.address] }),
    ).rejects.toThrow(/InvalidInitialization/);
    expect(await read(deployment.accountImplementation, smartAccountAbi, "owner")).toBe(zeroAddress);
  });

  it("wires the EntryPoint v0.8 contracts together", async () => {
    const { deployment, publicClient } = a;
    const read = (address: Hex, abi: Abi, functionName: string) => publicClient.readContract({ address, abi, functionName } as never) as Promise<unknown>;
    expect(await read(deployment.accountFactoryV08, accountFactoryV8Abi, "accountImplementation")).toBe(deployment.accountImplementationV08);
    expect(await read(deployment.accountImplementationV08, smartAccountV8Abi, "entryPoint")).toBe(ENTRY_POINT_V08);
    expect(await read(deployment.delegatedAccountV08, delegatedAccountV8Abi, "entryPoint")).toBe(ENTRY_POINT_V08);
    expect(await read(deployment.paymasterV08, verifyingPaymasterV8Abi, "entryPoint")).toBe(ENTRY_POINT_V08);
    expect(await read(deployment.paymasterV08, verifyingPaymasterV8Abi, "owner")).toBe(a.paymasterOwner.address);
    expect(await read(deployment.paymasterV08, verifyingPaymasterV8Abi, "verifyingSigner")).toBe(a.paymasterSigner.address);
    await expect(
      send(a, null, { address: deployment.accountImplementationV08, abi: smartAccountV8Abi, functionName: "initialize", args: [a.wallet.account.address] }),
    ).rejects.toThrow(/InvalidInitialization/);
    expect(await read(deployment.accountImplementationV08, smartAccountV8Abi, "owner")).toBe(zeroAddress);
  });
});

describe("AccountFactory", () => {
  it("deploys at getAddress(owner, salt), the same on both chains and as computed off-chain", async () => {
    const owner = randomAccount();
    const salt = generatePrivateKey();
    const predicted = await counterfactualAddress(a, owner.address, salt);
    expect(await counterfactualAddress(b, owner.address, salt)).toBe(predicted);

    const offChain = getContractAddress({
      opcode: "CREATE2",
      from: a.deployment.accountFactory,
      salt: keccak256(encodeAbiParameters([{ type: "address" }, { type: "bytes32" }], [owner.address, salt])),
      bytecode: concat([
        erc1967ProxyBytecode,
        encodeAbiParameters([{ type: "address" }, { type: "bytes" }], [a.deployment.accountImplementation, "0x"]),
      ]),
    });
    expect(offChain).toBe(predicted);

    for (const t of [a, b]) {
      const create = { address: t.deployment.accountFactory, abi: accountFactoryAbi, functionName: "createAccount", args: [owner.address, salt] } as const;
      const { result } = await t.publicClient.simulateContract({ ...create, account: t.wallet.account });
      expect(result).toBe(predicted);
      await send(t, null, create);
      expect(await readAccount(t, predicted, "owner")).toBe(owner.address);
      expect(await readAccount(t, predicted, "entryPoint")).toBe(ENTRY_POINT_V06);
      // Again: returns the address without reverting (EntryPoint initCode semantics), owner unchanged.
      const again = await t.publicClient.simulateContract({ ...create, account: t.wallet.account });
      expect(again.result).toBe(predicted);
      await send(t, null, create);
      expect(await readAccount(t, predicted, "owner")).toBe(owner.address);
    }
  });

  it("deploys an account with its first guardian at getAddressWithGuardian(owner, guardian, salt), computed off-chain too", async () => {
    const owner = randomAccount();
    const guardian = randomAccount();
    const salt = generatePrivateKey();
    const read = (t: TestChain, functionName: "getAddressWithGuardian", args: readonly [Hex, Hex, Hex]) =>
      t.publicClient.readContract({ address: t.deployment.accountFactory, abi: accountFactoryAbi, functionName, args });
    const predicted = await read(a, "getAddressWithGuardian", [owner.address, guardian.address, salt]);
    expect(await read(b, "getAddressWithGuardian", [owner.address, guardian.address, salt])).toBe(predicted);
    // The guardian is part of the address: another guardian (or none) is another account.
    expect(await read(a, "getAddressWithGuardian", [owner.address, randomAccount().address, salt])).not.toBe(predicted);
    expect(await counterfactualAddress(a, owner.address, salt)).not.toBe(predicted);
    const offChain = getContractAddress({
      opcode: "CREATE2",
      from: a.deployment.accountFactory,
      salt: keccak256(encodeAbiParameters([{ type: "address" }, { type: "address" }, { type: "bytes32" }], [owner.address, guardian.address, salt])),
      bytecode: concat([
        erc1967ProxyBytecode,
        encodeAbiParameters([{ type: "address" }, { type: "bytes" }], [a.deployment.accountImplementation, "0x"]),
      ]),
    });
    expect(offChain).toBe(predicted);

    const create = {
      address: a.deployment.accountFactory,
      abi: accountFactoryAbi,
      functionName: "createAccountWithGuardian",
      args: [owner.address, guardian.address, salt],
    } as const;
    expect((await a.publicClient.simulateContract({ ...create, account: a.wallet.account })).result).toBe(predicted);
    await send(a, null, create);
    expect(await readAccount(a, predicted, "owner")).toBe(owner.address);
    expect(await readAccount(a, predicted, "getGuardians")).toEqual([guardian.address]);
    // Again: the same address, nothing changed.
    await send(a, null, create);
    expect(await readAccount(a, predicted, "getGuardians")).toEqual([guardian.address]);
    await expect(
      send(a, null, { address: predicted, abi: smartAccountAbi, functionName: "initializeWithGuardian", args: [guardian.address, owner.address] }),
    ).rejects.toThrow(/InvalidInitialization/);

    // The guardian rules hold at deployment: never the owner itself, never zero (the account's InvalidGuardian).
    const invalidGuardian = new RegExp(toFunctionSelector("InvalidGuardian(address)"));
    for (const bad of [owner.address, zeroAddress]) {
      await expect(send(a, null, { ...create, args: [owner.address, bad, generatePrivateKey()] })).rejects.toThrow(invalidGuardian);
    }
  });

  it("gives another owner with the same salt another address, and the account cannot be re-initialized", async () => {
    const salt = generatePrivateKey();
    const one = randomAccount();
    const two = randomAccount();
    const first = await counterfactualAddress(a, one.address, salt);
    expect(await counterfactualAddress(a, two.address, salt)).not.toBe(first);
    await send(a, null, { address: a.deployment.accountFactory, abi: accountFactoryAbi, functionName: "createAccount", args: [one.address, salt] });
    await expect(
      send(a, null, { address: first, abi: smartAccountAbi, functionName: "initialize", args: [two.address] }),
    ).rejects.toThrow(/InvalidInitialization/);
  });
});
