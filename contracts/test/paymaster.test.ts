import { concat, encodeAbiParameters, parseEther, zeroHash } from "viem";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { entryPointAbi, verifyingPaymasterAbi } from "@/contracts/artifacts";
import {
  buildOp,
  executeCall,
  fund,
  handleOps,
  newAccount,
  now,
  paymasterHash,
  randomAccount,
  send,
  signOp,
  sponsor,
  startChain,
  walletFor,
  type TestChain,
  type TestAccount,
} from "./helpers";

let t: TestChain;
beforeAll(async () => {
  t = await startChain(31337);
});
afterAll(async () => {
  await t?.stop();
});

const paymaster = () => ({ address: t.deployment.paymaster, abi: verifyingPaymasterAbi }) as const;

/** A sponsored op from an account that holds no ETH at all. */
async function sponsoredOp(account: TestAccount, options: Parameters<typeof sponsor>[2] = {}, nonceKey = 0n) {
  return sponsor(t, await buildOp(t, { sender: account.address, callData: executeCall(randomAccount().address, 0n), nonceKey }), options);
}

describe("VerifyingPaymaster", () => {
  it("computes getHash as documented (chain, paymaster, times; no per-sender counter)", async () => {
    const account = await newAccount(t, { balance: 0n });
    const op = await buildOp(t, { sender: account.address, callData: executeCall(randomAccount().address, 1n) });
    const onChain = await t.publicClient.readContract({ ...paymaster(), functionName: "getHash", args: [op, 1234, 56] });
    expect(onChain).toBe(paymasterHash(t, op, 1234, 56));
    const sponsored = await sponsor(t, op, { validUntil: 1234, validAfter: 56 });
    const parsed = await t.publicClient.readContract({ ...paymaster(), functionName: "parsePaymasterAndData", args: [sponsored.paymasterAndData] });
    expect(parsed[0]).toBe(1234);
    expect(parsed[1]).toBe(56);
    expect(parsed[2]).toBe(`0x${sponsored.paymasterAndData.slice(2 + 2 * 84)}`);
  });

  it("sponsors two ops of one sender signed before either is submitted (sequential nonces, one bundle)", async () => {
    const account = await newAccount(t, { balance: 0n });
    const first = await sponsoredOp(account);
    const second = await sponsor(t, { ...first, nonce: first.nonce + 1n, signature: "0x" });
    const { results } = await handleOps(t, [await signOp(t, first, account.owner), await signOp(t, second, account.owner)]);
    expect(results.map((r) => r.success)).toEqual([true, true]);
    expect(results.every((r) => r.actualGasCost > 0n)).toBe(true);
    expect(await t.publicClient.getBalance({ address: account.address })).toBe(0n);
  });

  it("sponsors two pending ops on different nonce keys, submitted separately in either order", async () => {
    const account = await newAccount(t, { balance: 0n });
    const a = await signOp(t, await sponsoredOp(account, {}, 1n), account.owner);
    const b = await signOp(t, await sponsoredOp(account, {}, 2n), account.owner);
    expect((await handleOps(t, [b])).results[0]!.success).toBe(true);
    expect((await handleOps(t, [a])).results[0]!.success).toBe(true);
    // Replaying either is the account nonce's job: refused.
    await expect(handleOps(t, [a])).rejects.toThrow(/AA25 invalid account nonce/);
  });

  it("refuses a sponsorship signed by someone else (AA34)", async () => {
    const account = await newAccount(t, { balance: 0n });
    const op = await sponsoredOp(account, { signer: randomAccount() });
    await expect(handleOps(t, [await signOp(t, op, account.owner)])).rejects.toThrow(/AA34 signature error/);
  });

  it("refuses an expired or not yet valid sponsorship (AA32)", async () => {
    const account = await newAccount(t, { balance: 0n });
    const time = await now(t);
    const expired = await sponsoredOp(account, { validUntil: time - 1 });
    await expect(handleOps(t, [await signOp(t, expired, account.owner)])).rejects.toThrow(/AA32 paymaster expired or not due/);
    const early = await sponsoredOp(account, { validUntil: time + 7200, validAfter: time + 3600 });
    await expect(handleOps(t, [await signOp(t, early, account.owner)])).rejects.toThrow(/AA32 paymaster expired or not due/);
  });

  it("refuses a sponsorship that covered other op fields or another chain", async () => {
    const account = await newAccount(t, { balance: 0n });
    const op = await sponsoredOp(account);
    const changed = { ...op, callGasLimit: op.callGasLimit + 1n };
    await expect(handleOps(t, [await signOp(t, changed, account.owner)])).rejects.toThrow(/AA34 signature error/);
    const otherChain = { ...t, chainId: 1 };
    const foreign = await sponsor(otherChain, { ...op, paymasterAndData: "0x" });
    await expect(handleOps(t, [await signOp(t, foreign, account.owner)])).rejects.toThrow(/AA34 signature error/);
  });

  it("reverts on paymasterAndData of the wrong length, with a clear reason", async () => {
    const account = await newAccount(t, { balance: 0n });
    const op = await sponsoredOp(account);
    const short = { ...op, paymasterAndData: op.paymasterAndData.slice(0, -2) as `0x${string}` };
    await expect(handleOps(t, [await signOp(t, short, account.owner)])).rejects.toThrow(
      /AA33 reverted: VerifyingPaymaster: paymasterAndData must be/,
    );
    const bare = { ...op, paymasterAndData: concat([t.deployment.paymaster, encodeAbiParameters([{ type: "uint48" }, { type: "uint48" }], [0, 0])]) };
    await expect(handleOps(t, [await signOp(t, bare, account.owner)])).rejects.toThrow(/AA33 reverted: VerifyingPaymaster/);
  });

  it("only takes validation and postOp calls from the EntryPoint", async () => {
    const account = await newAccount(t, { balance: 0n });
    const op = await sponsoredOp(account);
    await expect(
      t.publicClient.readContract({ ...paymaster(), functionName: "validatePaymasterUserOp", args: [op, zeroHash, 0n] }),
    ).rejects.toThrow(/NotEntryPoint/);
    await expect(t.publicClient.readContract({ ...paymaster(), functionName: "postOp", args: [0, "0x", 0n] })).rejects.toThrow(/NotEntryPoint/);
  });

  it("lets only its owner change the signer, withdraw and manage stake", async () => {
    const owner = walletFor(t, t.paymasterOwner);
    await fund(t, t.paymasterOwner.address);
    const stranger = randomAccount();
    await expect(send(t, null, { ...paymaster(), functionName: "setVerifyingSigner", args: [stranger.address] })).rejects.toThrow(
      /OwnableUnauthorizedAccount/,
    );
    await expect(send(t, null, { ...paymaster(), functionName: "withdrawTo", args: [stranger.address, 1n] })).rejects.toThrow(
      /OwnableUnauthorizedAccount/,
    );
    await expect(send(t, null, { ...paymaster(), functionName: "addStake", args: [1], value: 1n })).rejects.toThrow(/OwnableUnauthorizedAccount/);

    // A new signer takes over; the old one's sponsorships stop working.
    const account = await newAccount(t, { balance: 0n });
    await send(t, owner, { ...paymaster(), functionName: "setVerifyingSigner", args: [stranger.address] });
    try {
      expect(await t.publicClient.readContract({ ...paymaster(), functionName: "verifyingSigner" })).toBe(stranger.address);
      await expect(handleOps(t, [await signOp(t, await sponsoredOp(account), account.owner)])).rejects.toThrow(/AA34/);
      const ok = await handleOps(t, [await signOp(t, await sponsoredOp(account, { signer: stranger }), account.owner)]);
      expect(ok.results[0]!.success).toBe(true);
    } finally {
      await send(t, owner, { ...paymaster(), functionName: "setVerifyingSigner", args: [t.paymasterSigner.address] });
    }

    // Deposit, withdraw, stake, unlock, withdraw stake.
    const deposit = await t.publicClient.readContract({ ...paymaster(), functionName: "getDeposit" });
    await send(t, null, { ...paymaster(), functionName: "deposit", args: [], value: parseEther("1") });
    expect(await t.publicClient.readContract({ ...paymaster(), functionName: "getDeposit" })).toBe(deposit + parseEther("1"));
    const sink = randomAccount().address;
    await send(t, owner, { ...paymaster(), functionName: "withdrawTo", args: [sink, parseEther("0.25")] });
    expect(await t.publicClient.getBalance({ address: sink })).toBe(parseEther("0.25"));

    await send(t, owner, { ...paymaster(), functionName: "addStake", args: [1], value: parseEther("0.5") });
    const info = await t.publicClient.readContract({
      address: t.deployment.entryPoint,
      abi: entryPointAbi,
      functionName: "getDepositInfo",
      args: [t.deployment.paymaster],
    });
    expect(info.staked).toBe(true);
    expect(info.stake).toBe(parseEther("0.5"));
    await send(t, owner, { ...paymaster(), functionName: "unlockStake", args: [] });
    await t.testClient.increaseTime({ seconds: 2 });
    await t.testClient.mine({ blocks: 1 });
    const stakeSink = randomAccount().address;
    await send(t, owner, { ...paymaster(), functionName: "withdrawStake", args: [stakeSink] });
    expect(await t.publicClient.getBalance({ address: stakeSink })).toBe(parseEther("0.5"));
  });
});
