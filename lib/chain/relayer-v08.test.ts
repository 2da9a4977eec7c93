import { afterAll, beforeAll, beforeEach, describe, expect, test } from "vitest";
import { parseEther, type Address, type PrivateKeyAccount } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { entryPointV08Abi } from "@/contracts/artifacts";
import { startAlto, type AltoBundler } from "@/test/helpers/alto";
import { chainOf, clientOf } from "@/test/helpers/chain";
import { accountFactoryCallV08, counterfactualAddressV08 } from "./accounts-v08";
import { serviceDeployment } from "./contracts";
import type { ChainConfig } from "./registry";
import { delegationCode, delegationOf, signDelegation } from "./eip7702";
import { enqueue, findUserOperationReceipt } from "./relayer";
import { configureRelayer, relayerEvents } from "./relayer/testing";
import { freshAccount, setBalance, signedOp } from "./testing";
import {
  buildUserOperationV08,
  encodeAccountCalls,
  encodeAccountCallsV08,
  signUserOperationV08,
  UserOperationRejectedError,
  userOperationHashV08,
  type BuildUserOperationV08Params,
  type UserOpV08,
} from "./userop";

const chain = chainOf(31338);
const client = clientOf(31338);
const d = () => serviceDeployment();

beforeAll(() => {
  // Test files run in parallel processes sharing the master key (so the executor keys): each file takes its own.
  configureRelayer({ executorOffset: 50, executors: 2 });
});

const newEoa = async (balance = parseEther("1")) => {
  const owner = privateKeyToAccount(generatePrivateKey());
  await setBalance(chain, owner.address, balance);
  return owner;
};

const pay = (to: Address, value = 1n) => encodeAccountCallsV08([{ to, value, data: "0x" }]);

/** A v0.8 op of the EOA `owner` (a Simple7702Account once delegated), paid from its own ETH, signed by it. */
async function signed(owner: PrivateKeyAccount, params: Omit<BuildUserOperationV08Params, "sender">): Promise<UserOpV08> {
  const op = await buildUserOperationV08(chain, { sender: owner.address, ...params });
  return signUserOperationV08(chain, op, owner);
}

/** An EOA already delegating to Simple7702Account (its first op landed). */
async function delegatedEoa() {
  const owner = await newEoa();
  const authorization = await signDelegation(chain, owner, d().simple7702Account);
  const { receipt } = await enqueue(chain, await signed(owner, { authorization, callData: pay(owner.address, 0n) }), { entryPointVersion: "0.8" });
  expect(receipt.success).toBe(true);
  return owner;
}

describe("EntryPoint v0.8 through the relayer", () => {
  test("a 7702 EOA's first op carries its authorization and lands in a type-4 bundle; its next op, without one, in an ordinary one", async () => {
    const owner = await newEoa();
    const recipient = privateKeyToAccount(generatePrivateKey()).address;
    const authorization = await signDelegation(chain, owner, d().simple7702Account);
    const first = await signed(owner, { authorization, callData: pay(recipient, parseEther("0.01")) });
    expect(first.factory).toBe("0x7702");

    const result = await enqueue(chain, first, { entryPointVersion: "0.8" });
    expect(result.userOpHash).toBe(userOperationHashV08(chain, first));
    expect(result.receipt).toMatchObject({ success: true, sender: owner.address, nonce: 0n, paymaster: "0x0000000000000000000000000000000000000000" });
    const transaction = await client.getTransaction({ hash: result.transactionHash });
    expect(transaction.type).toBe("eip7702");
    expect(transaction.to?.toLowerCase()).toBe(d().entryPointV08.toLowerCase());
    expect(transaction.authorizationList).toHaveLength(1);
    expect(await client.getCode({ address: owner.address })).toBe(delegationCode(d().simple7702Account).toLowerCase());
    expect((await delegationOf(chain, owner.address)).delegate?.toLowerCase()).toBe(d().simple7702Account.toLowerCase());
    expect(await client.getBalance({ address: recipient })).toBe(parseEther("0.01"));
    // The EOA paid the op's gas itself: its balance went down by the value and the gas (less what its deposit keeps).
    const deposit = await client.readContract({ address: d().entryPointV08, abi: entryPointV08Abi, functionName: "balanceOf", args: [owner.address] });
    expect((await client.getBalance({ address: owner.address })) + deposit).toBe(parseEther("1") - parseEther("0.01") - result.receipt.actualGasCost);

    const second = await signed(owner, { callData: pay(recipient, 5n) });
    expect(second.factory).toBeUndefined();
    expect(second.authorization).toBeUndefined();
    const next = await enqueue(chain, second, { entryPointVersion: "0.8" });
    expect(next.receipt).toMatchObject({ success: true, nonce: 1n });
    expect((await client.getTransaction({ hash: next.transactionHash })).type).toBe("eip1559");
    expect(await findUserOperationReceipt(chain, next.userOpHash)).toMatchObject({ success: true, transactionHash: next.transactionHash });
  });

  test("a v0.6 op and a v0.8 op enqueued together go out in one flush as two handleOps transactions, both landing", async () => {
    const owner = await delegatedEoa();
    const account = freshAccount();
    const v06 = await signedOp(chain, account, { callData: encodeAccountCalls([{ to: owner.address, value: 0n, data: "0x" }]), sponsored: true });
    const v08 = await signed(owner, { callData: pay(account.address, 0n) });
    const sent: { transactionHash: string; ops: number }[] = [];
    const onSent = (event: { chainId: number; transactionHash: string; ops: number }) => {
      if (event.chainId === chain.chainId) sent.push(event);
    };
    relayerEvents().on("bundle:sent", onSent);
    try {
      const [a, b] = await Promise.all([enqueue(chain, v06), enqueue(chain, v08, { entryPointVersion: "0.8" })]);
      expect(a.receipt.success).toBe(true);
      expect(b.receipt.success).toBe(true);
      expect(a.transactionHash).not.toBe(b.transactionHash);
      const [ta, tb] = await Promise.all([client.getTransaction({ hash: a.transactionHash }), client.getTransaction({ hash: b.transactionHash })]);
      expect(ta.to?.toLowerCase()).toBe(d().entryPoint.toLowerCase());
      expect(tb.to?.toLowerCase()).toBe(d().entryPointV08.toLowerCase());
      expect(sent.map((s) => s.transactionHash)).toEqual(expect.arrayContaining([a.transactionHash, b.transactionHash]));
    } finally {
      relayerEvents().off("bundle:sent", onSent);
    }
  });

  test("a v0.8 op whose call reverts on chain lands with success false and the UserOperationRevertReason of EntryPoint v0.8", async () => {
    const owner = await delegatedEoa();
    const built = await buildUserOperationV08(chain, { sender: owner.address, callData: pay(owner.address, 0n) });
    // The call changed after estimation (as state may change before inclusion): now a call the target refuses.
    const failing = encodeAccountCallsV08([{ to: d().entryPointV08, value: 0n, data: "0xdeadbeef" }]);
    const op = await signUserOperationV08(chain, { ...built, callData: failing, preVerificationGas: built.preVerificationGas + 1_000n }, owner);
    const { receipt } = await enqueue(chain, op, { entryPointVersion: "0.8" });
    expect(receipt.success).toBe(false);
    expect(receipt.revertData).not.toBeNull();
    expect(receipt.revertReason).toBeTypeOf("string");
    expect(await findUserOperationReceipt(chain, receipt.userOpHash)).toMatchObject({ success: false, revertData: receipt.revertData });
  });

  test("a v0.8 op signed by the wrong key is dropped with the EntryPoint's AA24; an op beside it still lands", async () => {
    const owner = await delegatedEoa();
    const other = await delegatedEoa();
    const stranger = privateKeyToAccount(generatePrivateKey());
    const bad = signUserOperationV08(chain, await buildUserOperationV08(chain, { sender: owner.address, callData: pay(owner.address, 0n) }), stranger);
    const good = signed(other, { callData: pay(other.address, 0n) });
    const [badResult, goodResult] = await Promise.allSettled([
      enqueue(chain, await bad, { entryPointVersion: "0.8" }),
      enqueue(chain, await good, { entryPointVersion: "0.8" }),
    ]);
    expect(badResult.status).toBe("rejected");
    const error = (badResult as PromiseRejectedResult).reason;
    expect(error).toBeInstanceOf(UserOperationRejectedError);
    expect((error as UserOperationRejectedError).code).toBe("AA24");
    expect(goodResult.status === "fulfilled" && goodResult.value.receipt.success).toBe(true);
  });

  test("an op whose authorization no longer applies (the EOA's nonce moved) is dropped with why, before anything is sent", async () => {
    const owner = await newEoa();
    const authorization = await signDelegation(chain, owner, d().simple7702Account);
    const op = await signed(owner, { authorization, callData: pay(owner.address, 0n) });
    // The EOA sends a transaction of its own: the authorization's nonce is spent.
    const wallet = (await import("./clients")).walletClient(chain, owner);
    await client.waitForTransactionReceipt({ hash: await wallet.sendTransaction({ to: owner.address, value: 0n }) });
    await expect(enqueue(chain, op, { entryPointVersion: "0.8" })).rejects.toThrow(/authorization has nonce 0, but the account's nonce is 1/);
    expect((await delegationOf(chain, owner.address)).hasCode).toBe(false);
  });

  test("enqueue refuses an op of the wrong version's shape", async () => {
    const owner = await newEoa();
    const op = await buildUserOperationV08(chain, { sender: owner.address, authorization: await signDelegation(chain, owner, d().simple7702Account), callData: "0x" });
    await expect(enqueue(chain, op as never)).rejects.toThrow(/entryPointVersion: "0.8"/);
    await expect(enqueue(chain, { ...op, initCode: "0x" } as never, { entryPointVersion: "0.8" })).rejects.toThrow(/initCode/);
  });

  test("sponsored by VerifyingPaymasterV8: a DelegatedAccountV8 EOA holding no ETH becomes a smart account, and an Upgradeable_v08 account deploys, both paying nothing", async () => {
    const window = { validUntil: Number((await client.getBlock()).timestamp) + 3_600, validAfter: 0 };
    const depositOf = () => client.readContract({ address: d().entryPointV08, abi: entryPointV08Abi, functionName: "balanceOf", args: [d().paymasterV08] });
    const before = await depositOf();

    const player = privateKeyToAccount(generatePrivateKey());
    const authorization = await signDelegation(chain, player, d().delegatedAccountV08);
    const delegatedOp = await signed(player, { authorization, callData: pay(player.address, 0n), sponsored: true, sponsorship: window });

    const owner = privateKeyToAccount(generatePrivateKey());
    const salt = generatePrivateKey();
    const sender = counterfactualAddressV08(owner.address, salt);
    const { factory, data } = accountFactoryCallV08(owner.address, salt);
    const factoryOp = await signUserOperationV08(
      chain,
      await buildUserOperationV08(chain, { sender, factory, factoryData: data, callData: pay(player.address, 0n), sponsored: true, sponsorship: window }),
      owner,
    );

    const [a, b] = await Promise.all([enqueue(chain, delegatedOp, { entryPointVersion: "0.8" }), enqueue(chain, factoryOp, { entryPointVersion: "0.8" })]);
    expect(a.receipt).toMatchObject({ success: true, paymaster: d().paymasterV08 });
    expect(b.receipt).toMatchObject({ success: true, paymaster: d().paymasterV08 });
    // One v0.8 bundle, a type-4 transaction because one op carries an authorization.
    expect(a.transactionHash).toBe(b.transactionHash);
    expect((await client.getTransaction({ hash: a.transactionHash })).type).toBe("eip7702");
    expect((await delegationOf(chain, player.address)).delegate?.toLowerCase()).toBe(d().delegatedAccountV08.toLowerCase());
    expect(await client.getCode({ address: sender })).not.toBe("0x");
    expect(await client.getBalance({ address: player.address })).toBe(0n);
    expect(before - (await depositOf())).toBe(a.receipt.actualGasCost + b.receipt.actualGasCost);
  });
});

describe("EntryPoint v0.8 through a real bundler (alto)", () => {
  let alto: AltoBundler;
  let viaBundler: ChainConfig;

  beforeAll(async () => {
    alto = await startAlto({ rpcUrl: chain.rpcUrl, entryPoint: d().entryPointV08 });
    viaBundler = { ...chain, bundlerUrl: alto.url };
  });

  afterAll(async () => {
    await alto?.stop();
  });

  beforeEach(({ onTestFailed }) => {
    onTestFailed(() => console.log(`alto's output:\n${alto.output().slice(-8_000)}`));
  });

  test("a sponsored 7702 first op goes out as eth_sendUserOperation with the v0.8 EntryPoint and eip7702Auth; alto lands it; a second op follows", async () => {
    const player = privateKeyToAccount(generatePrivateKey());
    const window = { validUntil: Number((await client.getBlock()).timestamp) + 3_600, validAfter: 0 };
    const authorization = await signDelegation(chain, player, d().delegatedAccountV08);
    const first = await signed(player, { authorization, callData: pay(player.address, 0n), sponsored: true, sponsorship: window });
    const result = await enqueue(viaBundler, first, { entryPointVersion: "0.8" });
    expect(result).toMatchObject({ userOpHash: userOperationHashV08(chain, first), executor: null, bundleSize: 1 });
    expect(result.receipt).toMatchObject({ success: true, sender: player.address, paymaster: d().paymasterV08 });
    expect(alto.executors.map((a) => a.toLowerCase())).toContain((await client.getTransaction({ hash: result.transactionHash })).from.toLowerCase());
    expect((await delegationOf(chain, player.address)).delegate?.toLowerCase()).toBe(d().delegatedAccountV08.toLowerCase());

    const second = await signed(player, { callData: pay(player.address, 0n), sponsored: true, sponsorship: window });
    const next = await enqueue(viaBundler, second, { entryPointVersion: "0.8" });
    expect(next.receipt).toMatchObject({ success: true, nonce: 1n });
  });

  test("a v0.8 op alto refuses comes back with the EntryPoint's AA reason", async () => {
    const owner = await delegatedEoa();
    const op = await buildUserOperationV08(chain, { sender: owner.address, callData: pay(owner.address, 0n) });
    const bad = await signUserOperationV08(chain, op, privateKeyToAccount(generatePrivateKey()));
    const error = await enqueue(viaBundler, bad, { entryPointVersion: "0.8" }).catch((err: unknown) => err);
    expect(error).toBeInstanceOf(UserOperationRejectedError);
    expect((error as UserOperationRejectedError).code).toBe("AA24");
  });
});
