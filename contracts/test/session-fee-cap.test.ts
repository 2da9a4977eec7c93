import { concat, parseEther, parseGwei, zeroAddress, type PrivateKeyAccount } from "viem";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { entryPointAbi } from "@/contracts/artifacts";
import {
  accountCall,
  buildOp,
  executeCall,
  handleOps,
  newAccount,
  now,
  ownerOp,
  randomAccount,
  runOp,
  signOp,
  sponsor,
  type TestAccount,
  type TestChain,
  type UserOp,
  startChain,
} from "./helpers";

let t: TestChain;
beforeAll(async () => {
  t = await startChain(31337);
});
afterAll(async () => {
  await t?.stop();
});

async function registerKey(account: TestAccount, key: PrivateKeyAccount, maxFeePerOp: bigint) {
  await ownerOp(t, account, accountCall("registerSessionKey", [key.address, 0, (await now(t)) + 3600, 100, [], maxFeePerOp]));
}

/** What the account holds: its balance and its EntryPoint deposit (a fee comes out of one or the other). */
const funds = async (address: `0x${string}`) => [
  await t.publicClient.getBalance({ address }),
  await t.publicClient.readContract({ address: t.deployment.entryPoint, abi: entryPointAbi, functionName: "balanceOf", args: [address] }),
];

/** v0.6's prefund without a paymaster: the most an op can make its account pay. */
const maxCost = (op: UserOp) => (op.callGasLimit + op.verificationGasLimit + op.preVerificationGas) * op.maxFeePerGas;

/** A self-bundler's dream: every gas field large (under the EntryPoint's 2^120 bound) and a priority fee to match. */
const greedy = { callGasLimit: 10_000_000n, verificationGasLimit: 1_000_000n, preVerificationGas: 5_000_000n, maxFeePerGas: parseGwei("1000"), maxPriorityFeePerGas: parseGwei("1000") };

describe("the fee a session key may make its account pay", () => {
  it("refuses a session-key op whose gas × maxFeePerGas exceeds the key's cap without a paymaster (AA24), leaving the account's funds", async () => {
    const account = await newAccount(t, { balance: parseEther("20") });
    const key = randomAccount();
    const cap = parseEther("0.01");
    await registerKey(account, key, cap);
    const target = randomAccount().address;

    const op = await buildOp(t, { sender: account.address, callData: executeCall(target, 1n), ...greedy });
    expect(maxCost(op)).toBeGreaterThan(parseEther("15"));
    const before = await funds(account.address);
    await expect(handleOps(t, [await signOp(t, op, key)])).rejects.toThrow(/AA24 signature error/);
    expect(await funds(account.address)).toEqual(before);

    // Just over the cap by the fee alone (the priority fee a self-bundler collects is bounded by maxFeePerGas).
    const justOver = await buildOp(t, { sender: account.address, callData: executeCall(target, 1n) });
    const overFee = cap / (justOver.callGasLimit + justOver.verificationGasLimit + justOver.preVerificationGas) + 1n;
    const over = { ...justOver, maxFeePerGas: overFee, maxPriorityFeePerGas: overFee };
    expect(maxCost(over)).toBeGreaterThan(cap);
    await expect(handleOps(t, [await signOp(t, over, key)])).rejects.toThrow(/AA24 signature error/);

    // Within the cap it validates and pays its own gas, at most the cap.
    const within = await buildOp(t, { sender: account.address, callData: executeCall(target, 1n) });
    expect(maxCost(within)).toBeLessThanOrEqual(cap);
    const { result } = await runOp(t, within, key);
    expect(result.actualGasCost).toBeLessThanOrEqual(cap);
    expect(await t.publicClient.getBalance({ address: target })).toBe(1n);
  });

  it("leaves owner-signed ops alone, whatever their fees", async () => {
    const account = await newAccount(t, { balance: parseEther("20") });
    await registerKey(account, randomAccount(), parseEther("0.01"));
    const target = randomAccount().address;
    await runOp(t, await buildOp(t, { sender: account.address, callData: executeCall(target, 1n), ...greedy, maxFeePerGas: parseGwei("100"), maxPriorityFeePerGas: parseGwei("1") }), account.owner);
    expect(await t.publicClient.getBalance({ address: target })).toBe(1n);
  });

  it("a cap of 0: the key signs only ops a paymaster pays for, which cost the account nothing", async () => {
    const account = await newAccount(t);
    const key = randomAccount();
    await registerKey(account, key, 0n);
    const target = randomAccount().address;
    const before = await funds(account.address);
    const selfPaid = await buildOp(t, { sender: account.address, callData: executeCall(target, 1n), maxFeePerGas: 1n, maxPriorityFeePerGas: 1n });
    await expect(handleOps(t, [await signOp(t, selfPaid, key)])).rejects.toThrow(/AA24 signature error/);
    // A paymasterAndData naming the zero address is no paymaster to the EntryPoint: the account would pay.
    const zeroPaymaster = { ...selfPaid, paymasterAndData: concat([zeroAddress, "0x1234"]) };
    await expect(handleOps(t, [await signOp(t, zeroPaymaster, key)])).rejects.toThrow(/AA24 signature error/);
    expect(await funds(account.address)).toEqual(before);

    const sponsored = await sponsor(t, await buildOp(t, { sender: account.address, callData: executeCall(target, 1n), ...greedy, maxFeePerGas: parseGwei("10"), maxPriorityFeePerGas: parseGwei("1") }));
    await runOp(t, sponsored, key);
    expect(await t.publicClient.getBalance({ address: target })).toBe(1n);
    expect(await t.publicClient.getBalance({ address: account.address })).toBe(before[0]! - 1n);
  });

  it("a guardian's recovery op naming the zero address as paymaster is refused: the account would pay (AA24)", async () => {
    const account = await newAccount(t);
    const guardian = randomAccount();
    await ownerOp(t, account, accountCall("addGuardian", [guardian.address]));
    const before = await funds(account.address);
    const op = await buildOp(t, { sender: account.address, callData: accountCall("startRecovery", [randomAccount().address]), paymasterAndData: concat([zeroAddress, "0x00"]) });
    await expect(handleOps(t, [await signOp(t, op, guardian)])).rejects.toThrow(/AA24 signature error/);
    expect(await funds(account.address)).toEqual(before);
  });
});
