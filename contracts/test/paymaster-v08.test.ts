import { concat, getAddress, parseEther, size, slice, toFunctionSelector, zeroHash } from "viem";
import { toPackedUserOperation } from "viem/account-abstraction";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { entryPointV08Abi, verifyingPaymasterV8Abi } from "@/contracts/artifacts";
import { ENTRY_POINT_V08 } from "@/lib/chain/deployment";
import { paymasterDataV08, paymasterHashV08, stubPaymasterDataV08 } from "@/lib/chain/paymaster-v08";
import { fund, now, randomAccount, send, walletFor, type TestChain } from "./helpers";
import {
  buildOpV08,
  executeV08,
  handleOpsV08,
  newAccountV08,
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

const paymaster = () => ({ address: t.deployment.paymasterV08, abi: verifyingPaymasterV8Abi }) as const;
const getDeposit = () => t.publicClient.readContract({ ...paymaster(), functionName: "getDeposit" });

/** A sponsored op from an account that holds no ETH at all. */
async function sponsoredOp(account: TestAccountV08, options: Parameters<typeof sponsorV08>[2] = {}, fields: Partial<OpV08> = {}) {
  return sponsorV08(t, await buildOpV08(t, { sender: account.address, callData: executeV08(randomAccount().address, 0n), ...fields }), options);
}

describe("VerifyingPaymasterV8", () => {
  it("computes getHash as paymasterHashV08 does, and lays out paymasterAndData as documented", async () => {
    const account = await newAccountV08(t, { balance: 0n });
    const op = await sponsorV08(t, await buildOpV08(t, { sender: account.address, callData: executeV08(randomAccount().address, 1n) }), {
      validUntil: 1234,
      validAfter: 56,
      paymasterVerificationGasLimit: 77_777n,
      paymasterPostOpGasLimit: 5n,
    });
    const packed = toPackedUserOperation(op);
    const onChain = await t.publicClient.readContract({ ...paymaster(), functionName: "getHash", args: [packed, 1234, 56] });
    expect(onChain).toBe(paymasterHashV08(t.chainId, t.deployment.paymasterV08, op, { validUntil: 1234, validAfter: 56 }));
    // paymaster(20) ++ verification gas(16) ++ postOp gas(16) ++ abi.encode(validUntil, validAfter)(64) ++ signature(65)
    expect(size(packed.paymasterAndData)).toBe(181);
    expect(getAddress(slice(packed.paymasterAndData, 0, 20))).toBe(t.deployment.paymasterV08);
    expect(BigInt(slice(packed.paymasterAndData, 20, 36))).toBe(77_777n);
    expect(BigInt(slice(packed.paymasterAndData, 36, 52))).toBe(5n);
    const [validUntil, validAfter, signature] = await t.publicClient.readContract({ ...paymaster(), functionName: "parsePaymasterAndData", args: [packed.paymasterAndData] });
    expect([validUntil, validAfter, signature]).toEqual([1234, 56, slice(packed.paymasterAndData, 116)]);
    expect(size(stubPaymasterDataV08({ validUntil: 1, validAfter: 0 }))).toBe(129);
  });

  it("pays for an account that holds nothing; two ops of one sender signed before either lands", async () => {
    const account = await newAccountV08(t, { balance: 0n });
    const before = await getDeposit();
    const first = await sponsoredOp(account);
    const second = await sponsorV08(t, { ...first, nonce: first.nonce + 1n, paymaster: undefined, paymasterData: undefined });
    const { results } = await handleOpsV08(t, [await signOpV08(t, first, account.owner), await signOpV08(t, second, account.owner)]);
    expect(results.map((r) => r.success)).toEqual([true, true]);
    expect(await getDeposit()).toBe(before - results[0]!.actualGasCost - results[1]!.actualGasCost);
    expect(await t.publicClient.getBalance({ address: account.address })).toBe(0n);
  });

  it("refuses a sponsorship signed by someone else (AA34)", async () => {
    const account = await newAccountV08(t, { balance: 0n });
    const op = await sponsoredOp(account, { signer: randomAccount() });
    await expect(handleOpsV08(t, [await signOpV08(t, op, account.owner)])).rejects.toThrow(/AA34 signature error/);
  });

  it("refuses an expired or not yet valid sponsorship (AA32)", async () => {
    const account = await newAccountV08(t, { balance: 0n });
    const time = await now(t);
    const expired = await sponsoredOp(account, { validUntil: time - 1 });
    await expect(handleOpsV08(t, [await signOpV08(t, expired, account.owner)])).rejects.toThrow(/AA32 paymaster expired or not due/);
    const early = await sponsoredOp(account, { validUntil: time + 7200, validAfter: time + 3600 });
    await expect(handleOpsV08(t, [await signOpV08(t, early, account.owner)])).rejects.toThrow(/AA32 paymaster expired or not due/);
  });

  it("refuses a sponsorship tampered with after signing: any bound field, its own gas limits, another chain (AA34)", async () => {
    const account = await newAccountV08(t, { balance: 0n });
    const op = await sponsoredOp(account);
    const tampered: OpV08[] = [
      { ...op, callData: executeV08(randomAccount().address, 0n) },
      { ...op, callGasLimit: op.callGasLimit + 1n },
      { ...op, verificationGasLimit: op.verificationGasLimit + 1n },
      { ...op, preVerificationGas: op.preVerificationGas + 1n },
      { ...op, maxFeePerGas: op.maxFeePerGas + 1n },
      { ...op, maxPriorityFeePerGas: op.maxPriorityFeePerGas + 1n },
      { ...op, paymasterVerificationGasLimit: op.paymasterVerificationGasLimit! + 1n },
      { ...op, paymasterPostOpGasLimit: 1n },
      // The window itself: the signature was for other times.
      { ...op, paymasterData: concat([paymasterDataV08({ validUntil: 2 ** 40, validAfter: 0 }, slice(op.paymasterData!, 64))]) },
    ];
    for (const changed of tampered) {
      await expect(handleOpsV08(t, [await signOpV08(t, changed, account.owner)])).rejects.toThrow(/AA34 signature error/);
    }
    const foreign = await sponsorV08({ ...t, chainId: 1 }, { ...op, paymaster: undefined, paymasterData: undefined });
    await expect(handleOpsV08(t, [await signOpV08(t, foreign, account.owner)])).rejects.toThrow(/AA34 signature error/);
    // Untouched, it lands.
    expect((await handleOpsV08(t, [await signOpV08(t, op, account.owner)])).results[0]!.success).toBe(true);
  });

  it("reverts on paymasterData of the wrong length with InvalidPaymasterAndData (AA33)", async () => {
    const account = await newAccountV08(t, { balance: 0n });
    const op = await sponsoredOp(account);
    const short = { ...op, paymasterData: slice(op.paymasterData!, 0, 128) };
    await expect(handleOpsV08(t, [await signOpV08(t, short, account.owner)])).rejects.toThrow(
      new RegExp(`AA33 reverted[\\s\\S]*${toFunctionSelector("InvalidPaymasterAndData(uint256)")}`),
    );
  });

  it("only takes validation and postOp calls from the EntryPoint", async () => {
    const account = await newAccountV08(t, { balance: 0n });
    const packed = toPackedUserOperation(await sponsoredOp(account));
    await expect(t.publicClient.readContract({ ...paymaster(), functionName: "validatePaymasterUserOp", args: [packed, zeroHash, 0n] })).rejects.toThrow(/NotEntryPoint/);
    await expect(t.publicClient.readContract({ ...paymaster(), functionName: "postOp", args: [0, "0x", 0n, 0n] })).rejects.toThrow(/NotEntryPoint/);
  });

  it("lets only its owner change the signer, withdraw and manage stake", async () => {
    const owner = walletFor(t, t.paymasterOwner);
    await fund(t, t.paymasterOwner.address);
    const stranger = randomAccount();
    for (const call of [
      { functionName: "setVerifyingSigner", args: [stranger.address] },
      { functionName: "withdrawTo", args: [stranger.address, 1n] },
      { functionName: "unlockStake", args: [] },
    ] as const) {
      await expect(send(t, null, { ...paymaster(), ...call } as never)).rejects.toThrow(/OwnableUnauthorizedAccount/);
    }

    const account = await newAccountV08(t, { balance: 0n });
    await send(t, owner, { ...paymaster(), functionName: "setVerifyingSigner", args: [stranger.address] });
    try {
      await expect(handleOpsV08(t, [await signOpV08(t, await sponsoredOp(account), account.owner)])).rejects.toThrow(/AA34/);
      const ok = await handleOpsV08(t, [await signOpV08(t, await sponsoredOp(account, { signer: stranger }), account.owner)]);
      expect(ok.results[0]!.success).toBe(true);
    } finally {
      await send(t, owner, { ...paymaster(), functionName: "setVerifyingSigner", args: [t.paymasterSigner.address] });
    }

    const deposit = await getDeposit();
    await send(t, null, { ...paymaster(), functionName: "deposit", args: [], value: parseEther("1") });
    expect(await getDeposit()).toBe(deposit + parseEther("1"));
    const sink = randomAccount().address;
    await send(t, owner, { ...paymaster(), functionName: "withdrawTo", args: [sink, parseEther("0.25")] });
    expect(await t.publicClient.getBalance({ address: sink })).toBe(parseEther("0.25"));

    await send(t, owner, { ...paymaster(), functionName: "addStake", args: [1], value: parseEther("0.5") });
    const info = await t.publicClient.readContract({ address: ENTRY_POINT_V08, abi: entryPointV08Abi, functionName: "getDepositInfo", args: [t.deployment.paymasterV08] });
    expect([info.staked, info.stake]).toEqual([true, parseEther("0.5")]);
    await send(t, owner, { ...paymaster(), functionName: "unlockStake", args: [] });
    await t.testClient.increaseTime({ seconds: 2 });
    await t.testClient.mine({ blocks: 1 });
    const stakeSink = randomAccount().address;
    await send(t, owner, { ...paymaster(), functionName: "withdrawStake", args: [stakeSink] });
    expect(await t.publicClient.getBalance({ address: stakeSink })).toBe(parseEther("0.5"));
  });
});

