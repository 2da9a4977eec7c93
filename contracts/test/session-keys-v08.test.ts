import { parseEther, parseGwei, zeroAddress, type Address, type Hex, type PrivateKeyAccount } from "viem";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { entryPointV08Abi, smartAccountV8Abi } from "@/contracts/artifacts";
import { ENTRY_POINT_V08 } from "@/lib/chain/deployment";
import { fund, increaseTime, now, randomAccount, send, walletFor, type TestChain } from "./helpers";
import {
  buildOpV08,
  callV08,
  executeBatchV08,
  executeV08,
  handleOpsV08,
  newAccountV08,
  ownerOpV08,
  readV08,
  runOpV08,
  signOpV08,
  sponsorV08,
  startChainV08,
  type OpV08,
  type TestAccountV08,
} from "./helpers-v08";

let t: TestChain;
beforeAll(async () => {
  t = await startChainV08(31337);
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

async function registerKey(account: TestAccountV08, key: PrivateKeyAccount, options: KeyOptions = {}) {
  const time = await now(t);
  // These keys' ops pay their own gas (buildOpV08's: 650k gas at 5 gwei, 0.00325 ETH).
  const { validAfter = 0, validUntil = time + 3600, limit = 5, whitelist = [], maxFeePerOp = parseEther("0.01") } = options;
  await ownerOpV08(t, account, callV08("registerSessionKey", [key.address, validAfter, validUntil, limit, whitelist, maxFeePerOp]));
}

const keyOp = async (account: TestAccountV08, key: PrivateKeyAccount, callData: Hex, fields: Partial<OpV08> = {}) =>
  signOpV08(t, await buildOpV08(t, { sender: account.address, callData, ...fields }), key);
const keyRun = async (account: TestAccountV08, key: PrivateKeyAccount, callData: Hex) =>
  runOpV08(t, await buildOpV08(t, { sender: account.address, callData }), key);

describe("session keys (v0.8)", () => {
  it("registers, reads back and validates execute/executeBatch ops within the whitelist, counting uses", async () => {
    const account = await newAccountV08(t);
    const key = randomAccount();
    const [allowed, alsoAllowed] = [randomAccount().address, randomAccount().address];
    const time = await now(t);
    await registerKey(account, key, { validAfter: time - 10, validUntil: time + 3600, limit: 3, whitelist: [allowed, alsoAllowed] });
    expect(await readV08(t, account.address, "getSessionKey", [key.address])).toEqual([time - 10, time + 3600, 3, 0, true, [allowed, alsoAllowed], parseEther("0.01")]);

    await keyRun(account, key, executeV08(allowed, 10n));
    await keyRun(account, key, executeBatchV08([{ target: allowed, value: 1n }, { target: alsoAllowed, value: 2n }]));
    expect(await t.publicClient.getBalance({ address: allowed })).toBe(11n);
    expect(await t.publicClient.getBalance({ address: alsoAllowed })).toBe(2n);
    expect((await readV08(t, account.address, "getSessionKey", [key.address]))[3]).toBe(2);
  });

  it("refuses the op once the limit is used up; re-registering resets it", async () => {
    const account = await newAccountV08(t);
    const key = randomAccount();
    await registerKey(account, key, { limit: 2 });
    const target = randomAccount().address;
    await keyRun(account, key, executeV08(target, 1n));
    await keyRun(account, key, executeV08(target, 1n));
    await expect(handleOpsV08(t, [await keyOp(account, key, executeV08(target, 1n))])).rejects.toThrow(/AA24 signature error/);
    await registerKey(account, key, { limit: 1 });
    await keyRun(account, key, executeV08(target, 1n));
    expect(await t.publicClient.getBalance({ address: target })).toBe(3n);
  });

  it("lets the EntryPoint enforce the time window: expired and not yet valid keys are refused (AA22)", async () => {
    const account = await newAccountV08(t);
    const [expired, early] = [randomAccount(), randomAccount()];
    const time = await now(t);
    await registerKey(account, expired, { validAfter: 0, validUntil: time + 60 });
    await registerKey(account, early, { validAfter: time + 3600, validUntil: time + 7200 });
    await expect(handleOpsV08(t, [await keyOp(account, early, executeV08(zeroAddress, 0n))])).rejects.toThrow(/AA22 expired or not due/);
    await increaseTime(t, 120);
    await expect(handleOpsV08(t, [await keyOp(account, expired, executeV08(zeroAddress, 0n))])).rejects.toThrow(/AA22 expired or not due/);
    await increaseTime(t, 3600);
    await keyRun(account, early, executeV08(zeroAddress, 0n));
  });

  it("refuses targets outside the whitelist, the account itself, and anything but execute/executeBatch", async () => {
    const account = await newAccountV08(t);
    const [key, anyTarget] = [randomAccount(), randomAccount()];
    const allowed = randomAccount().address;
    await registerKey(account, key, { whitelist: [allowed] });
    await registerKey(account, anyTarget); // empty whitelist: any target but the account
    const outsider = randomAccount().address;
    const refused: [PrivateKeyAccount, Hex][] = [
      [key, executeV08(outsider, 1n)],
      [key, executeBatchV08([{ target: allowed }, { target: outsider }])],
      [anyTarget, executeV08(account.address, 0n, callV08("transferOwnership", [outsider]))],
      [anyTarget, executeV08(account.address, 0n, callV08("registerSessionKey", [outsider, 0, 2 ** 40, 100, [], 0n]))],
      [anyTarget, executeBatchV08([{ target: outsider }, { target: account.address, data: callV08("addGuardian", [outsider]) }])],
      [anyTarget, callV08("transferOwnership", [outsider])],
      [anyTarget, callV08("upgradeToAndCall", [outsider, "0x"])],
      [anyTarget, callV08("startRecovery", [outsider])],
      [anyTarget, callV08("revokeAllSessionKeys", [])],
      [anyTarget, "0x"],
      [anyTarget, "0x12"],
    ];
    for (const [signer, callData] of refused) {
      await expect(handleOpsV08(t, [await keyOp(account, signer, callData)]), callData).rejects.toThrow(/AA24 signature error/);
    }
    await keyRun(account, anyTarget, executeV08(outsider, 1n));
    expect((await readV08(t, account.address, "getSessionKey", [anyTarget.address]))[3]).toBe(1);
  });

  it("refuses a revoked key; only authorized callers register or revoke; revokeAllSessionKeys retires them all", async () => {
    const account = await newAccountV08(t);
    const [key, other] = [randomAccount(), randomAccount()];
    await registerKey(account, key);
    await registerKey(account, other);
    await fund(t, key.address);
    const asKey = walletFor(t, key);
    await expect(
      send(t, asKey, { address: account.address, abi: smartAccountV8Abi, functionName: "registerSessionKey", args: [randomAccount().address, 0, 2 ** 40, 1, [], 0n] }),
    ).rejects.toThrow(/NotAuthorized/);
    await expect(send(t, asKey, { address: account.address, abi: smartAccountV8Abi, functionName: "revokeSessionKey", args: [key.address] })).rejects.toThrow(/NotAuthorized/);

    await ownerOpV08(t, account, callV08("revokeSessionKey", [key.address]));
    expect((await readV08(t, account.address, "getSessionKey", [key.address]))[4]).toBe(false);
    await expect(handleOpsV08(t, [await keyOp(account, key, executeV08(zeroAddress, 0n))])).rejects.toThrow(/AA24 signature error/);

    await ownerOpV08(t, account, callV08("revokeAllSessionKeys", []));
    expect((await readV08(t, account.address, "getSessionKey", [other.address]))[4]).toBe(false);
    await expect(handleOpsV08(t, [await keyOp(account, other, executeV08(zeroAddress, 0n))])).rejects.toThrow(/AA24 signature error/);
    // A key registered after that counts again.
    await registerKey(account, other);
    await keyRun(account, other, executeV08(zeroAddress, 0n));
  });

  it("validates registrations", async () => {
    const account = await newAccountV08(t);
    await fund(t, account.owner.address);
    const owner = walletFor(t, account.owner);
    const register = (key: Address, validAfter: number, validUntil: number, limit: number, whitelist: Address[]) =>
      send(t, owner, { address: account.address, abi: smartAccountV8Abi, functionName: "registerSessionKey", args: [key, validAfter, validUntil, limit, whitelist, 0n] });
    const key = randomAccount().address;
    await expect(register(zeroAddress, 0, 100, 1, [])).rejects.toThrow(/InvalidSessionKey/);
    await expect(register(account.owner.address, 0, 100, 1, [])).rejects.toThrow(/InvalidSessionKey/);
    await expect(register(key, 100, 100, 1, [])).rejects.toThrow(/InvalidSessionWindow/);
    await expect(register(key, 0, 100, 0, [])).rejects.toThrow(/InvalidSessionLimit/);
    const eleven = Array.from({ length: 11 }, () => randomAccount().address);
    await expect(register(key, 0, 100, 1, eleven)).rejects.toThrow(/TooManyWhitelistedTargets/);
    await expect(register(key, 0, 100, 1, [account.address])).rejects.toThrow(/InvalidWhitelistedTarget/);
    await register(key, 0, 100, 1, eleven.slice(0, 10));
    expect((await readV08(t, account.address, "getSessionKey", [key]))[5]).toHaveLength(10);
  });

  it("retires every session key when the owner changes", async () => {
    const account = await newAccountV08(t);
    const [key, next] = [randomAccount(), randomAccount()];
    await registerKey(account, key);
    await ownerOpV08(t, account, callV08("transferOwnership", [next.address]));
    await fund(t, next.address);
    await send(t, walletFor(t, next), { address: account.address, abi: smartAccountV8Abi, functionName: "acceptOwnership", args: [] });
    expect((await readV08(t, account.address, "getSessionKey", [key.address]))[4]).toBe(false);
    await expect(handleOpsV08(t, [await keyOp(account, key, executeV08(zeroAddress, 0n))])).rejects.toThrow(/AA24 signature error/);
  });
});

/** What the account holds: its balance and its EntryPoint deposit (a fee comes out of one or the other). */
const funds = async (address: Address) => [
  await t.publicClient.getBalance({ address }),
  await t.publicClient.readContract({ address: ENTRY_POINT_V08, abi: entryPointV08Abi, functionName: "balanceOf", args: [address] }),
];

/** v0.8's prefund without a paymaster: the most an op can make its account pay. */
const maxCost = (op: OpV08) => (op.verificationGasLimit + op.callGasLimit + op.preVerificationGas) * op.maxFeePerGas;

/** A self-bundler's dream: every gas field large (under the EntryPoint's 2^120 bound) and a priority fee to match. */
const greedy = { callGasLimit: 10_000_000n, verificationGasLimit: 1_000_000n, preVerificationGas: 5_000_000n, maxFeePerGas: parseGwei("1000"), maxPriorityFeePerGas: parseGwei("1000") };

describe("the fee a session key may make its account pay (v0.8)", () => {
  it("refuses a key's op whose prefund exceeds its cap without a paymaster (AA24), leaving the account's funds; within the cap it runs", async () => {
    const account = await newAccountV08(t, { balance: parseEther("20") });
    const key = randomAccount();
    const cap = parseEther("0.01");
    await registerKey(account, key, { maxFeePerOp: cap });
    const target = randomAccount().address;

    const greedyOp = await keyOp(account, key, executeV08(target, 1n), greedy);
    expect(maxCost(greedyOp)).toBeGreaterThan(parseEther("15"));
    const before = await funds(account.address);
    await expect(handleOpsV08(t, [greedyOp])).rejects.toThrow(/AA24 signature error/);
    expect(await funds(account.address)).toEqual(before);

    // Just over the cap by the fee alone.
    const plain = await buildOpV08(t, { sender: account.address, callData: executeV08(target, 1n) });
    const overFee = cap / (plain.callGasLimit + plain.verificationGasLimit + plain.preVerificationGas) + 1n;
    const over = { ...plain, maxFeePerGas: overFee, maxPriorityFeePerGas: overFee };
    expect(maxCost(over)).toBeGreaterThan(cap);
    await expect(handleOpsV08(t, [await signOpV08(t, over, key)])).rejects.toThrow(/AA24 signature error/);

    expect(maxCost(plain)).toBeLessThanOrEqual(cap);
    const { result } = await runOpV08(t, plain, key);
    expect(result.actualGasCost).toBeLessThanOrEqual(cap);
    expect(await t.publicClient.getBalance({ address: target })).toBe(1n);
  });

  it("leaves owner-signed ops alone, whatever their fees", async () => {
    const account = await newAccountV08(t, { balance: parseEther("20") });
    await registerKey(account, randomAccount(), { maxFeePerOp: parseEther("0.01") });
    const target = randomAccount().address;
    await runOpV08(t, await buildOpV08(t, { sender: account.address, callData: executeV08(target, 1n), ...greedy, maxFeePerGas: parseGwei("100"), maxPriorityFeePerGas: parseGwei("1") }), account.owner);
    expect(await t.publicClient.getBalance({ address: target })).toBe(1n);
  });

  it("a cap of 0: the key signs only ops a paymaster pays for, which cost the account nothing", async () => {
    const account = await newAccountV08(t);
    const key = randomAccount();
    await registerKey(account, key, { maxFeePerOp: 0n });
    const target = randomAccount().address;
    const before = await funds(account.address);
    await expect(handleOpsV08(t, [await keyOp(account, key, executeV08(target, 1n), { maxFeePerGas: 1n, maxPriorityFeePerGas: 1n })])).rejects.toThrow(/AA24 signature error/);
    expect(await funds(account.address)).toEqual(before);

    const sponsored = await sponsorV08(t, await buildOpV08(t, { sender: account.address, callData: executeV08(target, 1n), ...greedy, maxFeePerGas: parseGwei("10"), maxPriorityFeePerGas: parseGwei("1") }));
    await runOpV08(t, sponsored, key);
    expect(await t.publicClient.getBalance({ address: target })).toBe(1n);
    expect(await funds(account.address)).toEqual([before[0]! - 1n, before[1]]);
  });
});
