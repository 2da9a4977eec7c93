import { beforeAll, describe, expect, test } from "vitest";
import { encodeFunctionData, parseEther, type Address, type Hex } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { entryPointV08Abi, simple7702AccountAbi, verifyingPaymasterV8Abi } from "@/contracts/artifacts";
import { accountFactoryCallV08, counterfactualAddressV08 } from "./accounts-v08";
import { paymasterHashV08 } from "./paymaster-v08";
import { chainOf, clientOf } from "@/test/helpers/chain";
import { serviceDeployment } from "./contracts";
import { delegationCode, delegationOf, signDelegation } from "./eip7702";
import { configureRelayer } from "./relayer/testing";
import { setBalance } from "./testing";
import {
  callValueV08,
  CallRevertedError,
  encodeAccountCallsV08,
  estimateUserOperationV08,
  InsufficientFundsError,
  preVerificationGasV08,
  requiredPrefundV08,
  signUserOperationV08,
  simulateHandleOpV08,
  toPackedOp,
  UserOperationRejectedError,
  userOperationHashV08,
  type UserOpV08,
} from "./userop";

const chain = chainOf(31337);
const client = clientOf(31337);
const d = () => serviceDeployment();

beforeAll(() => {
  configureRelayer({ executorOffset: 40 });
});

const newEoa = async (balance = parseEther("1")) => {
  const owner = privateKeyToAccount(generatePrivateKey());
  await setBalance(chain, owner.address, balance);
  return owner;
};

/** EntryPoint v0.8's own getUserOpHash, with the sender's delegation in place by state override. */
const onChainHash = (op: UserOpV08, delegate: Address) =>
  client.readContract({
    address: d().entryPointV08,
    abi: entryPointV08Abi,
    functionName: "getUserOpHash",
    args: [toPackedOp(op)],
    stateOverride: [{ address: op.sender, code: delegationCode(delegate) }],
  });

describe("v0.8 encoding", () => {
  test("execute/executeBatch of BaseAccount v0.8; callValueV08 sums the ETH", () => {
    const a = { to: d().paymaster, value: 5n, data: "0x1234" as Hex };
    const b = { to: d().accountFactory, value: 7n, data: "0x" as Hex };
    expect(callValueV08(encodeAccountCallsV08([a]))).toBe(5n);
    expect(callValueV08(encodeAccountCallsV08([a, b]))).toBe(12n);
    expect(callValueV08("0x")).toBe(0n);
  });

  test("the prefund counts every gas limit, the paymaster's included, once", () => {
    const op = { callGasLimit: 1n, verificationGasLimit: 2n, preVerificationGas: 4n, maxFeePerGas: 10n };
    expect(requiredPrefundV08(op)).toBe(70n);
    expect(requiredPrefundV08({ ...op, paymasterVerificationGasLimit: 8n, paymasterPostOpGasLimit: 16n })).toBe(310n);
  });
});

describe("v0.8 estimation (EIP-7702 account)", () => {
  test("a first op with the owner's authorization: marker initCode, the hash as EntryPoint v0.8 computes it, gas by simulation with the delegation overridden", async () => {
    const owner = await newEoa();
    const recipient = privateKeyToAccount(generatePrivateKey()).address;
    const authorization = await signDelegation(chain, owner, d().simple7702Account);
    const { op, estimate } = await estimateUserOperationV08(chain, {
      sender: owner.address,
      authorization,
      callData: encodeAccountCallsV08([{ to: recipient, value: parseEther("0.01"), data: "0x" }]),
    });
    expect(op.factory).toBe("0x7702");
    expect(op.authorization).toEqual(authorization);
    expect(op.signature).toBe("0x");
    expect(estimate.value).toBe(parseEther("0.01"));
    expect(estimate.callGas).toBeGreaterThan(0n);
    expect(estimate.validationGas).toBeGreaterThan(0n);
    expect(op.preVerificationGas).toBe(preVerificationGasV08({ ...op, signature: `0x${"ff".repeat(65)}` }));
    expect(estimate.maxCost).toBe(requiredPrefundV08(op));

    const signed = await signUserOperationV08(chain, op, owner);
    expect(userOperationHashV08(chain, signed)).toBe(await onChainHash(signed, d().simple7702Account));
    // With the delegation in place, the real signature validates (sigFailed false) in simulation.
    const result = await simulateHandleOpV08(chain, signed, [
      { address: owner.address, code: delegationCode(d().simple7702Account) },
    ]);
    expect(result.account.sigFailed).toBe(false);
    expect((await delegationOf(chain, owner.address)).delegate).toBeNull();
  });

  test("a call that would revert is a CallRevertedError; an EOA that cannot pay is an InsufficientFundsError", async () => {
    const owner = await newEoa(parseEther("0.001"));
    const authorization = await signDelegation(chain, owner, d().simple7702Account);
    // Simple7702Account.execute reverts when the target call does: a call of a function the EntryPoint lacks.
    const failing = encodeAccountCallsV08([{ to: d().entryPointV08, value: 0n, data: "0xdeadbeef" }]);
    await expect(estimateUserOperationV08(chain, { sender: owner.address, authorization, callData: failing })).rejects.toBeInstanceOf(CallRevertedError);
    const tooMuch = encodeAccountCallsV08([{ to: owner.address, value: parseEther("1"), data: "0x" }]);
    await expect(estimateUserOperationV08(chain, { sender: owner.address, authorization, callData: tooMuch })).rejects.toBeInstanceOf(InsufficientFundsError);
  });

  test("an EOA with neither code nor authorization is AA20", async () => {
    const owner = await newEoa();
    await expect(
      estimateUserOperationV08(chain, { sender: owner.address, callData: encodeAccountCallsV08([{ to: owner.address, value: 0n, data: "0x" }]) }),
    ).rejects.toThrow(UserOperationRejectedError);
  });

  test("Simple7702Account's ABI is BaseAccount's execute", () => {
    const data = encodeFunctionData({ abi: simple7702AccountAbi, functionName: "execute", args: [d().paymaster, 1n, "0x"] });
    expect(encodeAccountCallsV08([{ to: d().paymaster, value: 1n, data: "0x" }])).toBe(data);
  });
});

describe("v0.8 sponsorship (VerifyingPaymasterV8) and our v0.8 accounts", () => {
  test("a sponsored op of an EOA delegating to DelegatedAccountV8: paymaster limits estimated, the sponsorship hash is the paymaster's getHash, the signed op validates", async () => {
    const owner = await newEoa(0n);
    const authorization = await signDelegation(chain, owner, d().delegatedAccountV08);
    const window = { validUntil: Number((await client.getBlock()).timestamp) + 3_600, validAfter: 0 };
    const { op, estimate } = await estimateUserOperationV08(chain, {
      sender: owner.address,
      authorization,
      callData: encodeAccountCallsV08([{ to: owner.address, value: 0n, data: "0x" }]),
      sponsored: true,
      sponsorship: window,
    });
    expect(op.paymaster).toBe(d().paymasterV08);
    expect(estimate.paymasterValidationGas).toBeGreaterThan(0n);
    expect(op.paymasterVerificationGasLimit).toBeGreaterThan(estimate.paymasterValidationGas);
    expect(op.paymasterPostOpGasLimit).toBe(0n);
    const delegation = [{ address: owner.address, code: delegationCode(d().delegatedAccountV08) }];
    const onChain = await client.readContract({
      address: d().paymasterV08,
      abi: verifyingPaymasterV8Abi,
      functionName: "getHash",
      args: [toPackedOp(op), window.validUntil, window.validAfter],
      stateOverride: delegation,
    });
    expect(paymasterHashV08(chain.chainId, d().paymasterV08, op, window)).toBe(onChain);
    const signed = await signUserOperationV08(chain, op, owner);
    const result = await simulateHandleOpV08(chain, signed, delegation);
    expect(result.account.sigFailed).toBe(false);
    expect(result.paymaster.sigFailed).toBe(false);
    expect(result.paymaster.validUntil).toBe(window.validUntil);
  });

  test("an Upgradeable_v08 account's first op: factory fields, its call estimated against the counterfactual account, sponsored", async () => {
    const owner = privateKeyToAccount(generatePrivateKey());
    const salt = generatePrivateKey();
    const sender = counterfactualAddressV08(owner.address, salt);
    const { factory, data } = accountFactoryCallV08(owner.address, salt);
    const recipient = privateKeyToAccount(generatePrivateKey()).address;
    const { op, estimate } = await estimateUserOperationV08(chain, {
      sender,
      factory,
      factoryData: data,
      callData: encodeAccountCallsV08([{ to: recipient, value: 0n, data: "0x" }]),
      sponsored: true,
      sponsorship: { validUntil: 0, validAfter: 0 },
    });
    expect(op.factory).toBe(factory);
    expect(estimate.callGas).toBeGreaterThan(0n);
    expect(estimate.validationGas).toBeGreaterThan(100_000n); // the proxy's deployment
    const signed = await signUserOperationV08(chain, op, owner);
    const result = await simulateHandleOpV08(chain, signed);
    expect(result.account.sigFailed).toBe(false);
    expect(result.paymaster.sigFailed).toBe(false);
    // A call that reverts is seen before anything is sent, the account made to look deployed.
    await expect(
      estimateUserOperationV08(chain, {
        sender,
        factory,
        factoryData: data,
        callData: encodeAccountCallsV08([{ to: d().entryPointV08, value: 0n, data: "0xdeadbeef" }]),
        sponsored: true,
      }),
    ).rejects.toBeInstanceOf(CallRevertedError);
  });
});
