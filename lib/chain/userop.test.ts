import { beforeAll, describe, expect, test } from "vitest";
import { decodeFunctionData, encodeFunctionData, parseEther, type Address, type Hex } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { accountFactoryAbi, entryPointAbi, smartAccountAbi, verifyingPaymasterAbi } from "@/contracts/artifacts";
import { chainOf, clientOf } from "@/test/helpers/chain";
import { serviceDeployment } from "./contracts";
import { enqueue } from "./relayer";
import { configureRelayer } from "./relayer/testing";
import { freshAccount, setBalance, signedOp } from "./testing";
import {
  buildUserOperation,
  callValue,
  CallRevertedError,
  DUMMY_SIGNATURE,
  encodeAccountCalls,
  estimateUserOperation,
  InsufficientFundsError,
  paymasterHash,
  preVerificationGas,
  signPaymasterAndData,
  signUserOperation,
  sponsorUserOperation,
  toEntryPointOp,
  sponsorshipWindow,
  UserOperationRejectedError,
  userOperationHash,
} from "./userop";

const chain = chainOf(31337);
const client = clientOf(31337);
const d = () => serviceDeployment();

// Test files run in parallel processes sharing the master key (so the executor keys): each file takes its own.
beforeAll(() => {
  configureRelayer({ executorOffset: 10 });
});

const newOwnerCall = (): { to: Address; value: bigint; data: Hex } => ({
  to: d().accountFactory,
  value: 0n,
  data: encodeFunctionData({
    abi: accountFactoryAbi,
    functionName: "createAccount",
    args: [privateKeyToAccount(generatePrivateKey()).address, generatePrivateKey()],
  }),
});

interface Trace {
  type: string;
  from: Address;
  to?: Address;
  input: Hex;
  gas: Hex;
  gasUsed: Hex;
  calls?: Trace[];
}

async function trace(hash: Hex): Promise<Trace> {
  return client.request({ method: "debug_traceTransaction" as never, params: [hash, { tracer: "callTracer" }] as never }) as Promise<Trace>;
}

const flatten = (t: Trace): Trace[] => [t, ...(t.calls ?? []).flatMap(flatten)];

describe("encoding", () => {
  test("one call is execute, several are executeBatch; callValue sums their ETH", () => {
    const a = { to: d().paymaster, value: 5n, data: "0x1234" as Hex };
    const b = { to: d().accountFactory, value: 7n, data: "0x" as Hex };
    const one = decodeFunctionData({ abi: smartAccountAbi, data: encodeAccountCalls([a]) });
    expect(one.functionName).toBe("execute");
    expect(one.args).toEqual([a.to, 5n, "0x1234"]);
    const batch = decodeFunctionData({ abi: smartAccountAbi, data: encodeAccountCalls([a, b]) });
    expect(batch.functionName).toBe("executeBatch");
    expect(batch.args).toEqual([[a.to, b.to], [5n, 7n], ["0x1234", "0x"]]);
    expect(callValue(encodeAccountCalls([a, b]))).toBe(12n);
    expect(callValue("0x")).toBe(0n);
    expect(() => encodeAccountCalls([])).toThrow();
  });

  test("preVerificationGas follows the v0.6 calldata formula", () => {
    const op = {
      sender: d().paymaster,
      nonce: 0n,
      initCode: "0x" as Hex,
      callData: "0x" as Hex,
      callGasLimit: 0n,
      verificationGasLimit: 0n,
      preVerificationGas: 0n,
      maxFeePerGas: 0n,
      maxPriorityFeePerGas: 0n,
      paymasterAndData: "0x" as Hex,
      signature: "0x" as Hex,
    };
    // 21000 + 18300 + the packed op's calldata cost (its 65-byte signature counted as non-zero bytes).
    const pvg = preVerificationGas(op);
    expect(pvg).toBeGreaterThan(21_000n + 18_300n);
    expect(pvg).toBeLessThan(45_000n);
    // Every non-zero calldata byte costs 12 more than a zero byte.
    expect(preVerificationGas({ ...op, callData: "0xffff" })).toBe(preVerificationGas({ ...op, callData: "0x0000" }) + 24n);
  });
});

describe("paymaster", () => {
  test("the off-chain sponsorship hash equals VerifyingPaymaster.getHash on chain, and the signature verifies", async () => {
    const account = freshAccount();
    const op = await buildUserOperation(chain, {
      sender: account.address,
      initCode: account.initCode,
      callData: encodeAccountCalls([newOwnerCall()]),
      sponsored: true,
    });
    const window = { validUntil: 1_900_000_000, validAfter: 1_700_000_000 };
    const onChain = await client.readContract({
      address: d().paymaster,
      abi: verifyingPaymasterAbi,
      functionName: "getHash",
      args: [toEntryPointOp(op), window.validUntil, window.validAfter],
    });
    expect(paymasterHash(chain.chainId, d().paymaster, op, window)).toBe(onChain);

    const paymasterAndData = await signPaymasterAndData(chain, op, window);
    expect((paymasterAndData.length - 2) / 2).toBe(149);
    const parsed = await client.readContract({
      address: d().paymaster,
      abi: verifyingPaymasterAbi,
      functionName: "parsePaymasterAndData",
      args: [paymasterAndData],
    });
    expect(parsed.slice(0, 2)).toEqual([window.validUntil, window.validAfter]);
  });

  test("the dummy signature has a signature's shape and recovers to an address", async () => {
    const { recoverMessageAddress } = await import("viem");
    expect((DUMMY_SIGNATURE.length - 2) / 2).toBe(65);
    await expect(recoverMessageAddress({ message: { raw: "0x01" }, signature: DUMMY_SIGNATURE })).resolves.toMatch(/^0x[0-9a-fA-F]{40}$/);
  });
});

describe("building and relaying", () => {
  test("a sponsored op deploys the account through initCode and runs its call; the paymaster pays, the account's ETH is untouched", async () => {
    const account = freshAccount();
    await setBalance(chain, account.address, parseEther("0.5"));
    const call = newOwnerCall();
    const { op: built, estimate } = await estimateUserOperation(chain, {
      sender: account.address,
      initCode: account.initCode,
      callData: encodeAccountCalls([call]),
      sponsored: true,
    });
    expect(built.initCode).toBe(account.initCode);
    expect(built.signature).toBe("0x");
    const op = await signUserOperation(chain, await sponsorUserOperation(chain, built, await sponsorshipWindow(chain, 3_600)), account.owner);
    const depositBefore = await client.readContract({ address: d().entryPoint, abi: entryPointAbi, functionName: "balanceOf", args: [d().paymaster] });

    const result = await enqueue(chain, op);
    expect(result.userOpHash).toBe(userOperationHash(chain, op));
    expect(result.receipt).toMatchObject({ success: true, sender: account.address, paymaster: d().paymaster, nonce: 0n });
    expect(await client.getCode({ address: account.address })).not.toBe("0x");
    expect(await client.getBalance({ address: account.address })).toBe(parseEther("0.5"));
    const depositAfter = await client.readContract({ address: d().entryPoint, abi: entryPointAbi, functionName: "balanceOf", args: [d().paymaster] });
    expect(depositBefore - depositAfter).toBe(result.receipt.actualGasCost);

    // Gas figures against what the transaction really used (call tracer).
    const calls = flatten(await trace(result.transactionHash));
    const entryPoint = d().entryPoint.toLowerCase();
    const execution = calls.find((c) => c.from.toLowerCase() === entryPoint && c.to?.toLowerCase() === account.address.toLowerCase() && c.input === op.callData)!;
    const callUsed = BigInt(execution.gasUsed);
    const validationUsed = calls
      .filter((c) => c.from.toLowerCase() === entryPoint && c.input !== op.callData && c.to?.toLowerCase() !== entryPoint && c.type === "CALL" && BigInt(c.gasUsed) > 0n)
      .reduce((sum, c) => sum + BigInt(c.gasUsed), 0n);
    expect(op.callGasLimit).toBeGreaterThanOrEqual(callUsed);
    expect(op.callGasLimit).toBeLessThanOrEqual(callUsed * 2n);
    expect(op.verificationGasLimit).toBeGreaterThanOrEqual(validationUsed);
    expect(op.verificationGasLimit).toBeGreaterThanOrEqual(estimate.validationGas);
    expect(op.verificationGasLimit).toBeLessThanOrEqual(validationUsed * 2n);
    expect(result.receipt.actualGasUsed * 2n).toBeGreaterThan(op.callGasLimit + op.verificationGasLimit + op.preVerificationGas);
  });

  test("an unsponsored op is paid by the account: it deploys itself and sends ETH, paying exactly the gas cost", async () => {
    const account = freshAccount();
    const recipient = privateKeyToAccount(generatePrivateKey()).address;
    await setBalance(chain, account.address, parseEther("1"));
    const op = await signedOp(chain, account, {
      callData: encodeAccountCalls([{ to: recipient, value: parseEther("0.1"), data: "0x" }]),
      sponsored: false,
    });
    expect(op.paymasterAndData).toBe("0x");
    const { receipt } = await enqueue(chain, op);
    expect(receipt).toMatchObject({ success: true, paymaster: "0x0000000000000000000000000000000000000000" });
    expect(await client.getBalance({ address: recipient })).toBe(parseEther("0.1"));
    // The EntryPoint takes the whole prefund and refunds the excess to the account's deposit.
    const [balance, deposit] = await Promise.all([
      client.getBalance({ address: account.address }),
      client.readContract({ address: d().entryPoint, abi: entryPointAbi, functionName: "balanceOf", args: [account.address] }),
    ]);
    expect(balance + deposit).toBe(parseEther("1") - parseEther("0.1") - receipt.actualGasCost);

    // The next op is paid from that deposit first.
    const again = await signedOp(chain, account, { callData: encodeAccountCalls([{ to: recipient, value: 1n, data: "0x" }]), sponsored: false });
    expect(again.initCode).toBe("0x");
    expect(again.nonce).toBe(1n);
    expect((await enqueue(chain, again)).receipt.success).toBe(true);
  });

  test("an unsponsored op from an account without funds is refused before anything is sent", async () => {
    const account = freshAccount();
    const err = await buildUserOperation(chain, {
      sender: account.address,
      initCode: account.initCode,
      callData: encodeAccountCalls([newOwnerCall()]),
      sponsored: false,
    }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(InsufficientFundsError);
    const funds = err as InsufficientFundsError;
    expect(funds.status).toBe(400);
    expect(funds.available).toBe(0n);
    expect(funds.required).toBeGreaterThan(0n);
    expect(funds.shortfall).toBe(funds.required);
    expect(funds.message).toMatch(/cannot pay for this operation: it needs [\d.]+ ETH \(gas prefund/);

    // Enough for part of it is still not enough.
    await setBalance(chain, account.address, funds.required / 2n);
    await expect(
      buildUserOperation(chain, { sender: account.address, initCode: account.initCode, callData: encodeAccountCalls([newOwnerCall()]), sponsored: false }),
    ).rejects.toBeInstanceOf(InsufficientFundsError);

    // Sponsored, gas is not the account's problem, but the ETH it sends is.
    const sends = encodeAccountCalls([{ to: account.owner.address, value: parseEther("5"), data: "0x" }]);
    const valueErr = (await buildUserOperation(chain, { sender: account.address, initCode: account.initCode, callData: sends, sponsored: true }).catch((e: unknown) => e)) as InsufficientFundsError;
    expect(valueErr).toBeInstanceOf(InsufficientFundsError);
    expect(valueErr.breakdown.value).toBe(parseEther("5"));
  });

  test("a reverting call is caught in simulation with its reason, and when forced on chain the receipt says so", async () => {
    const account = freshAccount();
    const reverting = encodeAccountCalls([
      { to: d().paymaster, value: 0n, data: encodeFunctionData({ abi: verifyingPaymasterAbi, functionName: "parsePaymasterAndData", args: ["0x12"] }) },
    ]);
    const err = await buildUserOperation(chain, { sender: account.address, initCode: account.initCode, callData: reverting, sponsored: true }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(CallRevertedError);
    expect((err as CallRevertedError).reason).toMatch(/^VerifyingPaymaster: paymasterAndData must be/);
    expect((err as CallRevertedError).status).toBe(400);

    // A custom error decodes with its arguments.
    const custom = encodeAccountCalls([
      { to: d().paymaster, value: 0n, data: encodeFunctionData({ abi: verifyingPaymasterAbi, functionName: "setVerifyingSigner", args: [account.owner.address] }) },
    ]);
    const customErr = (await buildUserOperation(chain, { sender: account.address, initCode: account.initCode, callData: custom, sponsored: true }).catch((e: unknown) => e)) as CallRevertedError;
    expect(customErr.reason).toBe(`OwnableUnauthorizedAccount(${account.address})`);

    // Forced: gas from a harmless call, then the reverting callData, sponsored and signed as it is.
    const built = await buildUserOperation(chain, { sender: account.address, initCode: account.initCode, callData: encodeAccountCalls([newOwnerCall()]), sponsored: true });
    const forced = await signUserOperation(
      chain,
      await sponsorUserOperation(chain, { ...built, callData: reverting }, await sponsorshipWindow(chain, 3_600)),
      account.owner,
    );
    const { receipt } = await enqueue(chain, forced);
    expect(receipt.success).toBe(false);
    expect(receipt.revertReason).toMatch(/^VerifyingPaymaster: paymasterAndData must be/);
    expect(receipt.actualGasCost).toBeGreaterThan(0n);
    // The deployment in its validation stands.
    expect(await client.getCode({ address: account.address })).not.toBe("0x");
  });

  test("validation failures are rejected with their AA code", async () => {
    const account = freshAccount();
    // No initCode for an account without code.
    const notDeployed = await buildUserOperation(chain, { sender: account.address, initCode: "0x", callData: encodeAccountCalls([newOwnerCall()]), sponsored: true }).catch((e: unknown) => e);
    expect(notDeployed).toBeInstanceOf(UserOperationRejectedError);
    expect((notDeployed as UserOperationRejectedError).code).toBe("AA20");

    // Signed by someone else: AA24 when relayed.
    const stranger = privateKeyToAccount(generatePrivateKey());
    const forged = await signedOp(chain, account, { callData: encodeAccountCalls([newOwnerCall()]), sponsored: true }, stranger);
    const rejected = (await enqueue(chain, forged).catch((e: unknown) => e)) as UserOperationRejectedError;
    expect(rejected).toBeInstanceOf(UserOperationRejectedError);
    expect(rejected.code).toBe("AA24");
    expect(rejected.message).toMatch(/AA24 signature error \(the signature does not match/);

    // The sponsorship of another op (its hash covers the gas figures): AA34.
    const op = await signedOp(chain, account, { callData: encodeAccountCalls([newOwnerCall()]), sponsored: true });
    const tampered = await signUserOperation(chain, { ...op, callGasLimit: op.callGasLimit + 1n }, account.owner);
    const paymasterRejected = (await enqueue(chain, tampered).catch((e: unknown) => e)) as UserOperationRejectedError;
    expect(paymasterRejected.code).toBe("AA34");
  });

  test("a session key's op gets enough verification gas for the session-key path (full whitelist, batch)", async () => {
    const account = freshAccount();
    const session = privateKeyToAccount(generatePrivateKey());
    const recipient = privateKeyToAccount(generatePrivateKey()).address;
    const { timestamp } = await client.getBlock();
    const register = encodeFunctionData({
      abi: smartAccountAbi,
      functionName: "registerSessionKey",
      // The longest whitelist, the targets last: the most checking.
      args: [
        session.address,
        0,
        Number(timestamp) + 86_400,
        5,
        [...Array.from({ length: 8 }, () => privateKeyToAccount(generatePrivateKey()).address), d().accountFactory, recipient],
        0n, // its ops are sponsored
      ],
    });
    expect((await enqueue(chain, await signedOp(chain, account, { callData: register, sponsored: true }))).receipt.success).toBe(true);

    const op = await signedOp(
      chain,
      account,
      {
        callData: encodeAccountCalls([newOwnerCall(), ...Array.from({ length: 6 }, () => ({ to: recipient, value: 0n, data: "0x" as Hex }))]),
        sponsored: true,
        signerKind: "sessionKey",
      },
      session,
    );
    const owner = await buildUserOperation(chain, { sender: account.address, initCode: "0x", callData: op.callData, sponsored: true });
    expect(op.verificationGasLimit).toBeGreaterThan(owner.verificationGasLimit);
    const { receipt, transactionHash } = await enqueue(chain, op);
    expect(receipt.success).toBe(true);
    // Room to spare over what validation really used.
    const validation = flatten(await trace(transactionHash)).find((c) => c.input.startsWith("0x3a871cdd"))!;
    expect(op.verificationGasLimit).toBeGreaterThan((BigInt(validation.gasUsed) * 15n) / 10n);
    const [, , , used] = await client.readContract({ address: account.address, abi: smartAccountAbi, functionName: "getSessionKey", args: [session.address] });
    expect(used).toBe(1);
  });
});
