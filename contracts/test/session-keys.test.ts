import { parseEther, zeroAddress, type Address, type PrivateKeyAccount } from "viem";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { smartAccountAbi } from "@/contracts/artifacts";
import {
  accountCall,
  buildOp,
  executeBatchCall,
  executeCall,
  fund,
  handleOps,
  increaseTime,
  newAccount,
  now,
  ownerOp,
  randomAccount,
  readAccount,
  runOp,
  send,
  signOp,
  startChain,
  walletFor,
  type TestAccount,
  type TestChain,
} from "./helpers";

let t: TestChain;
beforeAll(async () => {
  t = await startChain(31337);
});
afterAll(async () => {
  await t?.stop();
});

interface KeyOptions {
  validAfter?: number;
  validUntil?: number;
  limit?: number;
  whitelist?: Address[];
  maxFeePerOp?: bigint;
}

async function registerKey(account: TestAccount, key: PrivateKeyAccount, options: KeyOptions = {}) {
  const time = await now(t);
  // These keys' ops pay their own gas (buildOp's: 650k gas at 5 gwei, 0.00325 ETH).
  const { validAfter = 0, validUntil = time + 3600, limit = 5, whitelist = [], maxFeePerOp = parseEther("0.01") } = options;
  await ownerOp(t, account, accountCall("registerSessionKey", [key.address, validAfter, validUntil, limit, whitelist, maxFeePerOp]));
}

const keyOp = async (account: TestAccount, key: PrivateKeyAccount, callData: `0x${string}`) =>
  signOp(t, await buildOp(t, { sender: account.address, callData }), key);

describe("session keys", () => {
  it("registers, reads back and validates ops within the whitelist, counting uses", async () => {
    const account = await newAccount(t);
    const key = randomAccount();
    const [allowed, alsoAllowed] = [randomAccount().address, randomAccount().address];
    const time = await now(t);
    await registerKey(account, key, { validAfter: time - 10, validUntil: time + 3600, limit: 3, whitelist: [allowed, alsoAllowed] });
    expect(await readAccount(t, account.address, "getSessionKey", [key.address])).toEqual([
      time - 10,
      time + 3600,
      3,
      0,
      true,
      [allowed, alsoAllowed],
      parseEther("0.01"),
    ]);

    await runOp(t, await buildOp(t, { sender: account.address, callData: executeCall(allowed, 10n) }), key);
    await runOp(t, await buildOp(t, { sender: account.address, callData: executeBatchCall([{ target: allowed, value: 1n }, { target: alsoAllowed, value: 2n }]) }), key);
    expect(await t.publicClient.getBalance({ address: allowed })).toBe(11n);
    expect(await t.publicClient.getBalance({ address: alsoAllowed })).toBe(2n);
    expect((await readAccount(t, account.address, "getSessionKey", [key.address]))[3]).toBe(2);
  });

  it("refuses the op once the limit is used up", async () => {
    const account = await newAccount(t);
    const key = randomAccount();
    await registerKey(account, key, { limit: 2 });
    const target = randomAccount().address;
    await runOp(t, await buildOp(t, { sender: account.address, callData: executeCall(target, 1n) }), key);
    await runOp(t, await buildOp(t, { sender: account.address, callData: executeCall(target, 1n) }), key);
    await expect(handleOps(t, [await keyOp(account, key, executeCall(target, 1n))])).rejects.toThrow(/AA24 signature error/);
    // Re-registering replaces the key, uses included.
    await registerKey(account, key, { limit: 1 });
    await runOp(t, await buildOp(t, { sender: account.address, callData: executeCall(target, 1n) }), key);
    expect(await t.publicClient.getBalance({ address: target })).toBe(3n);
  });

  it("lets the EntryPoint enforce the time window: expired and not yet valid keys are refused (AA22)", async () => {
    const account = await newAccount(t);
    const [expired, early] = [randomAccount(), randomAccount()];
    const time = await now(t);
    await registerKey(account, expired, { validAfter: 0, validUntil: time + 60 });
    await registerKey(account, early, { validAfter: time + 3600, validUntil: time + 7200 });
    await expect(handleOps(t, [await keyOp(account, early, executeCall(zeroAddress, 0n))])).rejects.toThrow(/AA22 expired or not due/);
    await increaseTime(t, 120);
    await expect(handleOps(t, [await keyOp(account, expired, executeCall(zeroAddress, 0n))])).rejects.toThrow(/AA22 expired or not due/);
    await increaseTime(t, 3600);
    await runOp(t, await buildOp(t, { sender: account.address, callData: executeCall(zeroAddress, 0n) }), early);
  });

  it("refuses targets outside the whitelist, the account itself, and anything but execute/executeBatch", async () => {
    const account = await newAccount(t);
    const [key, anyTarget] = [randomAccount(), randomAccount()];
    const allowed = randomAccount().address;
    await registerKey(account, key, { whitelist: [allowed] });
    await registerKey(account, anyTarget); // empty whitelist: any target but the account
    const outsider = randomAccount().address;
    const refused = [
      [key, executeCall(outsider, 1n)],
      [key, executeBatchCall([{ target: allowed }, { target: outsider }])],
      [anyTarget, executeCall(account.address, 0n, accountCall("transferOwnership", [outsider]))],
      [anyTarget, executeCall(account.address, 0n, accountCall("registerSessionKey", [outsider, 0, 2 ** 40, 100, [], 0n]))],
      [anyTarget, executeBatchCall([{ target: outsider }, { target: account.address, data: accountCall("addGuardian", [outsider]) }])],
      [anyTarget, accountCall("transferOwnership", [outsider])],
      [anyTarget, accountCall("upgradeToAndCall", [outsider, "0x"])],
      [anyTarget, accountCall("startRecovery", [outsider])],
      [anyTarget, "0x"],
      [anyTarget, "0x12"],
    ] as const;
    for (const [signer, callData] of refused) {
      await expect(handleOps(t, [await keyOp(account, signer, callData)]), callData).rejects.toThrow(/AA24 signature error/);
    }
    await runOp(t, await buildOp(t, { sender: account.address, callData: executeCall(outsider, 1n) }), anyTarget);
    expect((await readAccount(t, account.address, "getSessionKey", [anyTarget.address]))[3]).toBe(1);
  });

  it("refuses a revoked key; only the owner may register or revoke", async () => {
    const account = await newAccount(t);
    const key = randomAccount();
    await registerKey(account, key);
    await fund(t, key.address);
    const asKey = walletFor(t, key);
    await expect(
      send(t, asKey, { address: account.address, abi: smartAccountAbi, functionName: "registerSessionKey", args: [randomAccount().address, 0, 2 ** 40, 1, [], 0n] }),
    ).rejects.toThrow(/NotAuthorized/);
    await expect(
      send(t, asKey, { address: account.address, abi: smartAccountAbi, functionName: "revokeSessionKey", args: [key.address] }),
    ).rejects.toThrow(/NotAuthorized/);

    await ownerOp(t, account, accountCall("revokeSessionKey", [key.address]));
    expect((await readAccount(t, account.address, "getSessionKey", [key.address]))[4]).toBe(false);
    await expect(handleOps(t, [await keyOp(account, key, executeCall(zeroAddress, 0n))])).rejects.toThrow(/AA24 signature error/);
    await fund(t, account.owner.address);
    await expect(
      send(t, walletFor(t, account.owner), { address: account.address, abi: smartAccountAbi, functionName: "revokeSessionKey", args: [key.address] }),
    ).rejects.toThrow(/SessionKeyNotActive/);
  });

  it("validates registrations", async () => {
    const account = await newAccount(t);
    await fund(t, account.owner.address);
    const owner = walletFor(t, account.owner);
    const register = (key: Address, validAfter: number, validUntil: number, limit: number, whitelist: Address[]) =>
      send(t, owner, { address: account.address, abi: smartAccountAbi, functionName: "registerSessionKey", args: [key, validAfter, validUntil, limit, whitelist, 0n] });
    const key = randomAccount().address;
    await expect(register(zeroAddress, 0, 100, 1, [])).rejects.toThrow(/InvalidSessionKey/);
    await expect(register(account.owner.address, 0, 100, 1, [])).rejects.toThrow(/InvalidSessionKey/);
    await expect(register(key, 100, 100, 1, [])).rejects.toThrow(/InvalidSessionWindow/);
    await expect(register(key, 0, 100, 0, [])).rejects.toThrow(/InvalidSessionLimit/);
    const eleven = Array.from({ length: 11 }, () => randomAccount().address);
    await expect(register(key, 0, 100, 1, eleven)).rejects.toThrow(/TooManyWhitelistedTargets/);
    await expect(register(key, 0, 100, 1, [account.address])).rejects.toThrow(/InvalidWhitelistedTarget/);
    await register(key, 0, 100, 1, eleven.slice(0, 10));
    expect((await readAccount(t, account.address, "getSessionKey", [key]))[5]).toHaveLength(10);
  });

  it("retires every session key when the owner changes", async () => {
    const account = await newAccount(t);
    const [key, next] = [randomAccount(), randomAccount()];
    await registerKey(account, key);
    await ownerOp(t, account, accountCall("transferOwnership", [next.address]));
    await fund(t, next.address);
    await send(t, walletFor(t, next), { address: account.address, abi: smartAccountAbi, functionName: "acceptOwnership", args: [] });
    expect((await readAccount(t, account.address, "getSessionKey", [key.address]))[4]).toBe(false);
    await expect(handleOps(t, [await keyOp(account, key, executeCall(zeroAddress, 0n))])).rejects.toThrow(/AA24 signature error/);
  });
});
